"""The one exception type for user mistakes. The CLI prints its message as
one line and exits 2; ``--debug`` shows the traceback."""


class UserError(Exception):
    """Bad input: the message says what is wrong and what to do."""
