"""Panel titles name the dataset and whichever other key varies, in words; panels come in a reader's order."""

import pandas as pd

from zerognn.figures.data import panels


def test_panel_titles_say_which_mode_and_load_a_panel_holds():
    df = pd.DataFrame({"dataset": ["d"] * 4, "deterministic": [False, True, False, True],
                       "host_load": [0, 0, 16, 16], "gpus": [1] * 4})
    titles = [title for title, _ in panels(df, ["dataset", "deterministic", "host_load", "gpus"])]
    assert titles == ["d · default mode · host load 0", "d · default mode · host load 16",
                      "d · deterministic · host load 0", "d · deterministic · host load 16"]


def test_precision_panels_follow_the_declared_precisions_not_the_alphabet():
    df = pd.DataFrame({"dataset": ["d"] * 4, "dtype": ["bfloat16", "tf32", "float32", "bfloat16"],
                       "batch_size": [1024, 1024, 1024, 256]})
    titles = [title for title, _ in panels(df, ["dataset", "dtype", "batch_size"])]
    assert titles == ["d · float32 · B=1024", "d · tf32 · B=1024", "d · bfloat16 · B=256", "d · bfloat16 · B=1024"]
