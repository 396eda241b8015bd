"""User-facing errors: one exception type whose message names the problem and the fix."""


class ZeroGNNError(Exception):
    """An error caused by input (config, files, arguments, machine) that the user can fix.

    The CLI prints these without a traceback; the message must say what is wrong and what to do.
    """


def one_line(exc: BaseException, with_type: bool = False) -> str:
    """An exception's message on one line (``Type: message`` with ``with_type``), for a one-line error."""
    text = " ".join(str(exc).split())
    if not with_type:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def missing_extra(extra: str, what: str, exc: ImportError) -> ZeroGNNError:
    """The error for a feature whose optional dependencies (``pip install 'zerognn[<extra>]'``) are absent."""
    return ZeroGNNError(f"{what} needs the '{extra}' extra, which is not installed ({one_line(exc)}); "
                        f"pip install 'zerognn[{extra}]'")
