"""A Server-Sent Events parser over a byte stream (the WHATWG "event stream" rules: ``event:``,
``id:``, ``data:`` and ``retry:`` fields, comments, and a blank line ending each event). Lines
end only at CR, LF or CRLF: a JSON payload may hold U+2028, where ``str.splitlines`` would cut."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class RawEvent:
    event: str
    """The ``event:`` field; ``message`` when the server named none."""
    data: str
    """The ``data:`` lines joined by newlines."""
    id: str | None = None
    retry: int | None = None
    """The ``retry:`` field, in milliseconds."""


def read_events(chunks: Iterable[bytes]) -> Iterator[RawEvent]:
    """Each complete event of the stream; one cut off by the end of the stream is dropped."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    buffer = ""
    event, data, event_id, retry, seen = "", [], None, None, False
    for chunk in _then_end(chunks):
        buffer += decoder.decode(chunk or b"", final=chunk is None)
        while True:
            match = _LINE_END.search(buffer)
            # A CR at the very end may be half of a CRLF: wait for more, unless the stream ended.
            if not match or (match.group() == "\r" and match.end() == len(buffer) and chunk is not None):
                break
            line, buffer = buffer[: match.start()], buffer[match.end() :]
            if line == "":
                if seen:
                    yield RawEvent(event or "message", "\n".join(data), event_id, retry)
                event, data, event_id, retry, seen = "", [], None, None, False
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            seen = True
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
            elif field == "id" and "\0" not in value:
                event_id = value
            elif field == "retry" and value.isdigit():
                retry = int(value)


def _then_end(chunks: Iterable[bytes]) -> Iterator[bytes | None]:
    yield from chunks
    yield None
