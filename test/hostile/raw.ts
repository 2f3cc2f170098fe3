import { connect } from 'node:net';

/** What came back for a raw request: the status of the first response line (0 when none came) and the bytes. */
export interface RawReply {
  readonly status: number;
  readonly text: string;
}

/**
 * Sends `bytes` as they are over a new TCP connection to `port` and reads
 * until the server closes (or `timeoutMs` passes: then `status` is 0 unless a
 * status line had arrived).
 */
export function rawRequest(port: number, bytes: string | Buffer, timeoutMs = 5000): Promise<RawReply> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: '127.0.0.1' });
    let text = '';
    const done = (): void => {
      clearTimeout(timer);
      sock.destroy();
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : 0, text });
    };
    const timer = setTimeout(done, timeoutMs);
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => (text += d));
    sock.on('end', done);
    sock.on('close', done);
    sock.on('error', done);
    sock.write(bytes);
  });
}

/** A GET request line for `target` with a Host header, closing after the answer. */
export function requestLine(target: string, method = 'GET'): string {
  return `${method} ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
}

/** One response read off a raw connection: its status, headers (names in lower case) and body. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What one raw connection got back: the responses in order, and whether the server closed it. */
export interface RawExchange {
  readonly responses: RawResponse[];
  readonly closed: boolean;
}

/**
 * Sends `bytes` over a new TCP connection to `port` and reads responses (a
 * body by its `Content-Length`; a 101 ends the reading, what follows is
 * another protocol). Returns once the server closed the connection, or
 * `settleMs` after `want` responses came (then `closed` says whether the
 * server closed it meanwhile), or after `timeoutMs`.
 */
export function exchange(port: number, bytes: string | Buffer, want: number, opts: { settleMs?: number; timeoutMs?: number } = {}): Promise<RawExchange> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: '127.0.0.1' });
    const responses: RawResponse[] = [];
    let buf = '';
    let closed = false;
    let upgraded = false;
    let settle: NodeJS.Timeout | undefined;
    const done = (): void => {
      clearTimeout(timer);
      clearTimeout(settle);
      sock.destroy();
      resolve({ responses, closed });
    };
    const timer = setTimeout(done, opts.timeoutMs ?? 5000);
    const parse = (): void => {
      while (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const [line, ...fields] = buf.slice(0, end).split('\r\n');
        const headers: Record<string, string> = {};
        for (const f of fields) {
          const colon = f.indexOf(':');
          headers[f.slice(0, colon).trim().toLowerCase()] = f.slice(colon + 1).trim();
        }
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(line ?? '')?.[1] ?? 0);
        const length = status === 101 ? 0 : Number(headers['content-length'] ?? 0);
        if (buf.length < end + 4 + length) return;
        responses.push({ status, headers, body: Buffer.from(buf.slice(end + 4, end + 4 + length), 'latin1').toString('utf8') });
        buf = buf.slice(end + 4 + length);
        upgraded = status === 101;
      }
    };
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => {
      buf += d;
      parse();
      if (responses.length >= want && settle === undefined) settle = setTimeout(done, opts.settleMs ?? 200);
    });
    const close = (): void => {
      closed = true;
      done();
    };
    sock.on('end', close);
    sock.on('close', close);
    sock.on('error', close);
    sock.write(bytes);
  });
}
