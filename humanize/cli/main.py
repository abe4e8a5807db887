"""humanize-bench: how easily does a detector of machine-generated text get fooled,
at what cost to the text, and at what compute cost?"""

from __future__ import annotations

import argparse
import sys

from humanize.cli.common import one_line, expected_errors


def build_parser() -> argparse.ArgumentParser:
    from humanize import __version__

    parser = argparse.ArgumentParser(prog="humanize-bench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"humanize-bench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in command_modules():
        module.add_parser(sub)
    return parser


#: The commands listed first in ``--help``, in this order (each a module of its own); the others follow by name.
FIRST = ("demo", "run", "report", "plot", "tour", "attack", "listing")


def command_modules() -> list:
    """The commands, each in a module of its own (``humanize/cli/<name>.py`` with an ``add_parser(subparsers)``
    function; shared helpers in :mod:`humanize.cli.common`): adding a command is one new file."""
    import importlib
    import pkgutil

    import humanize.cli as package

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_") or info.name == "main":
            continue
        module = importlib.import_module(f"humanize.cli.{info.name}")
        if callable(getattr(module, "add_parser", None)):
            found.append(module)
    rank = {name: i for i, name in enumerate(FIRST)}
    return sorted(found, key=lambda m: (rank.get(m.__name__.rpartition(".")[2], len(FIRST)), m.__name__))


#: the exit status of a run stopped by Ctrl-C (128 + SIGINT, what a shell reports)
INTERRUPTED = 130


#: the exit status of a run whose output pipe closed (128 + SIGPIPE, what a shell reports for ``cmd | head``)
CLOSED_PIPE = 141
#: where an internal error (a bug) asks to be reported
REPORT_BUGS = "please report it with the traceback above (and `humanize-bench --version`) to the project's issue tracker"


def _quiet_closed_pipe() -> int:
    """The reader of standard output went away (``humanize-bench report | head``): stop quietly, and
    point standard output at /dev/null so Python's own flush at exit says nothing either."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a captured stream)
        pass
    return CLOSED_PIPE


def main(argv: list[str] | None = None) -> int:
    """Run one command behind the CLI's one error boundary; the exit status: 0 success, 2 a user or
    input error (a bad flag, an unknown component, a missing or damaged database, a bad config, a
    plug-in that cannot be used, a detector that failed on every text, a full disk: one line on
    stderr, secrets hidden, control characters escaped), 1 an internal error (a bug: its traceback
    and where to report it), 130 Ctrl-C (one line; what was computed is stored), 141 standard
    output closed by its reader (nothing printed)."""
    try:
        args = build_parser().parse_args(argv)  # a usage error: argparse's message and status 2
    except BrokenPipeError:
        return _quiet_closed_pipe()
    command = f"humanize-bench {args.command}"
    try:
        try:
            status = args.func(args)
            sys.stdout.flush()  # a closed pipe is found here, inside the boundary, not at exit
            return status
        except SystemExit as exit_:
            if isinstance(exit_.code, str):  # a command's one-line refusal
                message = one_line(exit_.code)
                print(message if message.startswith("humanize-bench") else f"{command}: {message}", file=sys.stderr)
                return 2
            raise
        except KeyboardInterrupt:
            print(f"{command}: interrupted; what was computed is stored (rerun the same command to resume)",
                  file=sys.stderr)
            return INTERRUPTED
        except BrokenPipeError:
            return _quiet_closed_pipe()
        except expected_errors() as err:
            print(f"{command}: {one_line(err)}", file=sys.stderr)
            return 2
        except Exception as err:  # noqa: BLE001 - the boundary: a bug, said as one, with its traceback
            import traceback

            from humanize._secrets import scrub_secrets

            sys.stderr.write(scrub_secrets("".join(traceback.format_exception(err))))
            print(f"{command}: internal error ({type(err).__name__}): this is a bug in humanize-bench, not in "
                  f"your input; {REPORT_BUGS}", file=sys.stderr)
            return 1
    except BrokenPipeError:  # the pipe closed while an error was being said
        return _quiet_closed_pipe()


if __name__ == "__main__":
    sys.exit(main())
