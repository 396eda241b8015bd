"""Panel titles name the dataset and whichever other key varies, in words."""

import pandas as pd

from zerognn.figures.data import panels


def test_panel_titles_say_which_mode_and_load_a_panel_holds():
    df = pd.DataFrame({"dataset": ["d"] * 4, "deterministic": [False, True, False, True],
                       "host_load": [0, 0, 16, 16], "gpus": [1] * 4})
    titles = [title for title, _ in panels(df, ["dataset", "deterministic", "host_load", "gpus"])]
    assert titles == ["d · default mode · host load 0", "d · default mode · host load 16",
                      "d · deterministic · host load 0", "d · deterministic · host load 16"]
