// A Server-Sent Events parser over a fetch body stream (the WHATWG "event stream" rules:
// `event:`, `id:`, `data:` and `retry:` fields, comments, and a blank line ending each event).

/** One event as the server wrote it. */
export interface RawEvent {
  /** The `event:` field; `message` when the server named none. */
  event: string;
  /** The `id:` field of this event, if it had one. */
  id?: string;
  /** The `data:` lines joined by newlines. */
  data: string;
  /** The `retry:` field, in milliseconds, if the event carried one. */
  retry?: number;
}

/** Reads `body` to its end, yielding each complete event. An event cut off by the end of the
 *  stream is dropped, as the SSE rules require. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<RawEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let event = '';
  let id: string | undefined;
  let data: string[] = [];
  let retry: number | undefined;
  let seenField = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let end: number;
      // A line ends at \n, \r\n or \r; a \r at the very end may be half of a \r\n.
      while ((end = lineEnd(buffer, done)) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(buffer[end] === '\r' && buffer[end + 1] === '\n' ? end + 2 : end + 1);
        if (line === '') {
          if (seenField) yield { event: event || 'message', id, data: data.join('\n'), retry };
          event = '';
          id = undefined;
          data = [];
          retry = undefined;
          seenField = false;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? '' : line.slice(colon + 1);
        if (text.startsWith(' ')) text = text.slice(1);
        seenField = true;
        if (field === 'event') event = text;
        else if (field === 'data') data.push(text);
        else if (field === 'id' && !text.includes('\0')) id = text;
        else if (field === 'retry' && /^\d+$/.test(text)) retry = Number(text);
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}

function lineEnd(buffer: string, done: boolean): number {
  for (let i = 0; i < buffer.length; i++) {
    const c = buffer[i];
    if (c === '\n') return i;
    if (c === '\r') return i + 1 < buffer.length || done ? i : -1;
  }
  return -1;
}
