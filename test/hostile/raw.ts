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
