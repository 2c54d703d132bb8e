"""The terminal spectator: ``underhall watch NAME``.

The screen of ``underhall play`` (:class:`~client.ui.PlayApp`: the same
model, renderer, log and chat line) fed by the watched player's frames
(docs/protocol.md, "Watching a player"), read-only: keys that would act
send nothing; ``Enter`` opens the chat line (to the player and its other
spectators), ``?`` the help, ``Q`` quits. A lost connection is watched
again for about 10 s, as ``play`` reconnects.
"""

from __future__ import annotations

from blessed import Terminal

from client import keys
from client.connection import Connection, ConnectionClosed
from client.safe_text import clean_message
from client.ui import PlayApp, _terminal_mode, describe_open_failure, run_in_terminal

__all__ = ["WatchApp", "run_watch"]


class WatchApp(PlayApp):
    """One watching session: :class:`~client.ui.PlayApp` with no command.

    Args:
        term: The terminal.
        url: The server.
        name: The spectator's own name (its chat lines').
        watched: The name of the player watched.
        conn: The open connection (its ``welcome`` is the spectator's).
    """

    def __init__(self, term: Terminal, url: str, name: str, watched: str, conn: Connection) -> None:
        self.watched = watched
        super().__init__(term, url, name, None, conn)
        self.log.add("Watching: keys act on nothing.  Enter: chat   ?: help   Q: quit.")

    def _welcomed(self, conn: Connection) -> None:
        """A spectator has no token to keep."""
        welcome = clean_message(conn.welcome)
        self.log.add(f"You watch {welcome.name}.")

    def on_key(self, key: keys.Key) -> None:
        """Quit, help, chat, look at a cell (said from what is on screen);
        every other action is dropped (a spectator sends no command)."""
        action = self.translate(key)
        if isinstance(action, keys.ChatSend):
            self._outbox.put_nowait(action)
        self.dirty()

    again = "watching again"

    async def open_again(self) -> Connection:
        """Watch the same player again."""
        return await Connection.open(self.url, self.name, watch=self.watched, open_timeout=2.0)


async def _watch(term: Terminal, url: str, name: str, watched: str) -> tuple[int, str]:
    try:
        conn = await Connection.open(url, name, watch=watched)
    except ConnectionClosed as exc:
        return 1, describe_open_failure(url, exc)
    with _terminal_mode(term):
        app = WatchApp(term, url, name, watched, conn)
        return await app.run()


def run_watch(url: str, watched: str, *, name: str) -> int:
    """Watch the player called ``watched`` on the server at ``url``, in this
    terminal, as a spectator called ``name``.

    Returns:
        The process exit status, as :func:`client.ui.run_play`'s: 0 after
        quitting, 1 when the server cannot be reached or refuses (nobody of
        that name plays, the player does not want to be watched) or the
        watched player leaves, 2 when standard input/output is not a
        terminal, 130 after Ctrl-C.
    """
    return run_in_terminal("watch", lambda term: _watch(term, url, name, watched))
