import WebSocket from 'ws';

/** A stream client as a partner would write it: pings every `pingMs` (real time) unless silent. */
export class StreamClient {
  readonly messages: any[] = [];
  closed: { code: number; reason: string } | null = null;
  private pinger: NodeJS.Timeout | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => this.messages.push(JSON.parse(d.toString())));
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      if (this.pinger) clearInterval(this.pinger);
    });
    ws.on('error', () => undefined);
  }

  static connect(
    url: string,
    token: string,
    opts: { silent?: boolean; pingMs?: number; localAddress?: string } = {},
  ): Promise<StreamClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, localAddress: opts.localAddress });
      const c = new StreamClient(ws);
      ws.once('open', () => {
        if (!opts.silent)
          c.pinger = setInterval(() => ws.readyState === WebSocket.OPEN && ws.ping(), opts.pingMs ?? 100);
        resolve(c);
      });
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  of(stream: string): any[] {
    return this.messages.filter((m) => m.stream === stream);
  }

  close(): void {
    if (this.pinger) clearInterval(this.pinger);
    this.ws.close();
  }
}

export type UpgradeOutcome = { open: true } | { open: false; status: number; challenge?: string; body: any };

/** Try an upgrade and report the HTTP refusal, if any: status, parsed body, WWW-Authenticate. */
export function tryUpgrade(url: string, headers: Record<string, string> = {}): Promise<UpgradeOutcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      resolve({ open: true });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        let parsed: unknown = body;
        try {
          parsed = JSON.parse(body);
        } catch {
          // not JSON: keep the text for the assertion message
        }
        resolve({
          open: false,
          status: res.statusCode ?? 0,
          challenge: res.headers['www-authenticate'] as string | undefined,
          body: parsed,
        });
      });
    });
    ws.once('error', () => undefined);
  });
}
