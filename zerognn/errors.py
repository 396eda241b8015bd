"""User-facing errors: one exception type whose message names the problem and the fix."""


class ZeroGNNError(Exception):
    """An error caused by input (config, files, arguments, machine) that the user can fix.

    The CLI prints these without a traceback; the message must say what is wrong and what to do.
    """
