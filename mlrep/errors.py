"""The base of every error the user can fix; `mlrep` prints it as one line and exits 2."""


class MlrepError(Exception):
    """A problem with the user's input, data or environment, with the fix in its message."""
