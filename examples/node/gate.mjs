// The waiting room's gate for Node sites (no dependencies): the same flow as
// the Go package queue/gate, with the same cookie format.
//
//   import { createGate } from './gate.mjs';
//   const gate = createGate({ queueUrls: ['http://127.0.0.1:8081'], queue: 'tickets',
//     prefix: '/checkout/', secret: process.env.GATE_COOKIE_SECRET });
//   http.createServer((req, res) => gate.handle(req, res, () => site(req, res))).listen(3000);
//
// gate.handle(req, res, next) also works as Express/Connect middleware: app.use(gate.handle).
import crypto from 'node:crypto';

const b64 = (buf) => Buffer.from(buf).toString('base64url');

export function createGate({
  queueUrls, queue, prefix = '/', secret, roomUrl, cookieName = 'waitroom_session',
  secure = false, heartbeatEveryMs = 30000, leavePath = '/leave', afterLeave = '/', now = () => Date.now(),
}) {
  if (!queueUrls?.length || !queue) throw new Error('gate: need queueUrls and queue');
  if (!secret || Buffer.byteLength(secret) < 32) throw new Error('gate: the cookie secret must have at least 32 bytes');
  const bases = queueUrls.map((u) => u.replace(/\/+$/, ''));
  const room = roomUrl || `${bases[0]}/q/${encodeURIComponent(queue)}`;
  const base = prefix.replace(/\/+$/, '');

  const mac = (body) => crypto.createHmac('sha256', secret).update('waitroom-gate-v1\0').update(body).digest();
  const encode = (v) => {
    const body = `${b64(v.token)}.${v.expires}.${v.heartbeat}`;
    return `${body}.${b64(mac(body))}`;
  };
  const decode = (s) => {
    const i = s.lastIndexOf('.');
    if (i < 0 || s.length > 4096) return null;
    const body = s.slice(0, i);
    const sig = Buffer.from(s.slice(i + 1), 'base64url');
    const want = mac(body);
    if (sig.length !== want.length || !crypto.timingSafeEqual(sig, want)) return null;
    const [tok, exp, hb, ...rest] = body.split('.');
    if (rest.length || !/^\d+$/.test(exp) || !/^\d+$/.test(hb)) return null;
    const token = Buffer.from(tok, 'base64url').toString();
    return token ? { token, expires: Number(exp), heartbeat: Number(hb) } : null;
  };

  const covers = (path) => base === '' || path === base || path.startsWith(base + '/');

  async function call(path, token, body) {
    let lastErr;
    for (const b of bases) {
      try {
        const res = await fetch(`${b}/v1/queues/${encodeURIComponent(queue)}${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(5000),
        });
        if (res.status === 503) { lastErr = new Error(`${b}: 503`); continue; }
        return { status: res.status, body: res.status === 200 ? await res.json() : {} };
      } catch (err) { lastErr = err; }
    }
    throw lastErr;
  }

  const cookieAttrs = (req) => `; Path=/; HttpOnly; SameSite=Lax${secure || req.socket.encrypted ? '; Secure' : ''}`;
  const setCookie = (req, res, v) => res.setHeader('Set-Cookie',
    `${cookieName}=${encode(v)}; Expires=${new Date(v.expires).toUTCString()}${cookieAttrs(req)}`);
  const clearCookie = (req, res) => res.setHeader('Set-Cookie', `${cookieName}=; Max-Age=0${cookieAttrs(req)}`);
  const redirect = (res, to) => { res.writeHead(303, { Location: to, 'Cache-Control': 'no-store' }); res.end(); };
  const readCookie = (req) => {
    for (const part of (req.headers.cookie || '').split(';')) {
      const [k, ...v] = part.trim().split('=');
      if (k === cookieName) return v.join('=');
    }
    return null;
  };

  // session returns the visitor's session, heartbeating it when due, or null.
  async function session(req, res) {
    const raw = readCookie(req);
    if (!raw) return null;
    let v = decode(raw);
    const t = now();
    if (!v || t >= v.expires) { clearCookie(req, res); return null; }
    if (t - v.heartbeat >= heartbeatEveryMs) {
      let r;
      try { r = await call('/heartbeat', v.token, {}); } catch { return v; } // queue down: keep the session
      if (r.status === 200) {
        v = { ...v, heartbeat: t, expires: Math.max(v.expires, Date.parse(r.body.expires_at)) };
        setCookie(req, res, v);
      } else if (r.status === 410 || r.status === 401) {
        clearCookie(req, res);
        return null;
      }
    }
    return v;
  }

  async function enter(req, res, url, pass) {
    let r;
    try { r = await call('/enter', '', { pass }); } catch {
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end('The waiting room cannot be reached. Reload the page in a moment.');
      return;
    }
    url.searchParams.delete('pass');
    const back = url.pathname + url.search;
    if (r.status === 200) {
      setCookie(req, res, { token: r.body.session, expires: Date.parse(r.body.expires_at), heartbeat: now() });
      redirect(res, back);
    } else if (r.status === 409 && (await session(req, res))) {
      redirect(res, back);
    } else if (r.status === 410) {
      redirect(res, room);
    } else {
      res.writeHead(403, { 'Content-Type': 'text/plain' });
      res.end(r.status === 409 ? 'This pass has already been used.' : 'This pass is not valid here.');
    }
  }

  async function leave(req, res) {
    const v = decode(readCookie(req) || '');
    if (v) { try { await call('/release', v.token, {}); } catch { /* the session ends by itself */ } }
    clearCookie(req, res);
    redirect(res, afterLeave);
  }

  // handle gates req: next() runs the site for visitors who may pass, with
  // req.waitroom = { token, expires } on protected paths.
  async function handle(req, res, next) {
    const url = new URL(req.url, 'http://site');
    if (req.method === 'POST' && url.pathname === leavePath) return leave(req, res);
    if (!covers(url.pathname)) return next();
    const pass = url.searchParams.get('pass');
    if (pass) return enter(req, res, url, pass);
    const v = await session(req, res);
    if (!v) return redirect(res, room);
    req.waitroom = { token: v.token, expires: new Date(v.expires) };
    return next();
  }

  return { handle, encode, decode };
}
