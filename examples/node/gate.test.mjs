// node --test examples/node/ : the gate against a stand-in queue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createGate } from './gate.mjs';

// fakeQueue: passes "good" (valid once) and "forged"; sessions last a minute.
function fakeQueue(clock) {
  const state = { used: new Set(), sessions: new Map(), released: [], heartbeats: 0 };
  const srv = http.createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    const token = (req.headers.authorization || '').replace(/^Bearer /, '');
    const json = (code, obj) => { res.writeHead(code, { 'Content-Type': 'application/json' }); res.end(JSON.stringify(obj)); };
    if (req.headers['content-type'] !== 'application/json') return json(415, {});
    switch (req.url) {
      case '/v1/queues/shop/enter': {
        const { pass } = JSON.parse(body);
        if (pass !== 'good') return json(401, {});
        if (state.used.has(pass)) return json(409, {});
        state.used.add(pass);
        const exp = clock.t + 60000;
        state.sessions.set('tok-1', exp);
        return json(200, { state: 'entered', session: 'tok-1', expires_at: new Date(exp).toISOString() });
      }
      case '/v1/queues/shop/heartbeat': {
        state.heartbeats++;
        const exp = state.sessions.get(token);
        if (!exp || clock.t >= exp) return json(410, {});
        state.sessions.set(token, clock.t + 60000);
        return json(200, { state: 'admitted', expires_at: new Date(clock.t + 60000).toISOString() });
      }
      case '/v1/queues/shop/release':
        state.released.push(token);
        state.sessions.delete(token);
        return json(200, { released: true });
      default:
        return json(404, {});
    }
  });
  return { srv, state };
}

const listen = (srv) => new Promise((r) => srv.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${srv.address().port}`)));

async function setup() {
  const clock = { t: Date.parse('2026-12-02T10:00:00Z') };
  const q = fakeQueue(clock);
  const queueUrl = await listen(q.srv);
  const gate = createGate({ queueUrls: [queueUrl], queue: 'shop', prefix: '/checkout/', secret: 's'.repeat(32),
    roomUrl: 'http://room.example/q/shop', heartbeatEveryMs: 10000, now: () => clock.t });
  const site = http.createServer((req, res) => gate.handle(req, res, () => {
    res.end(`site:${new URL(req.url, 'http://x').pathname}${req.waitroom ? ' ' + req.waitroom.token : ''}`);
  }));
  const base = await listen(site);
  let cookie = '';
  const get = async (path, method = 'GET') => {
    const res = await fetch(base + path, { method, redirect: 'manual', headers: cookie ? { cookie } : {} });
    const set = res.headers.get('set-cookie');
    if (set) cookie = set.includes('Max-Age=0') ? '' : set.split(';')[0];
    return { status: res.status, location: res.headers.get('location'), body: await res.text(), set };
  };
  const close = () => { site.close(); q.srv.close(); };
  return { clock, q, gate, get, close, setCookie: (c) => { cookie = c; } };
}

test('a visitor is sent to the room, enters with a pass, stays, leaves', async () => {
  const s = await setup();
  try {
    assert.equal((await s.get('/about')).body, 'site:/about');
    let r = await s.get('/checkout/cart');
    assert.equal(r.status, 303);
    assert.equal(r.location, 'http://room.example/q/shop');
    assert.equal((await s.get('/checkout/cart?pass=forged')).status, 403);

    r = await s.get('/checkout/cart?pass=good&item=7');
    assert.equal(r.status, 303);
    assert.equal(r.location, '/checkout/cart?item=7');
    assert.match(r.set, /HttpOnly/);
    assert.match(r.set, /SameSite=Lax/);

    r = await s.get('/checkout/cart');
    assert.equal(r.status, 200);
    assert.equal(r.body, 'site:/checkout/cart tok-1');

    s.clock.t += 55000; // heartbeat due
    r = await s.get('/checkout/cart');
    assert.equal(r.status, 200);
    assert.equal(s.q.state.heartbeats, 1);
    s.clock.t += 30000; // past the first deadline, inside the extended one
    assert.equal((await s.get('/checkout/cart')).status, 200);

    r = await s.get('/leave', 'POST');
    assert.equal(r.status, 303);
    assert.deepEqual(s.q.state.released, ['tok-1']);
    assert.equal((await s.get('/checkout/cart')).status, 303);
  } finally { s.close(); }
});

test('a tampered cookie is refused; the format is the Go gate\'s', async () => {
  const s = await setup();
  try {
    const v = { token: 'tok-1', expires: s.clock.t + 3600000, heartbeat: s.clock.t };
    const good = s.gate.encode(v);
    assert.deepEqual(s.gate.decode(good), v);
    // the Go package's value for the same inputs (queue/gate TestCookieVector)
    assert.equal(s.gate.encode({ token: 'tok-1', expires: 1796212800000, heartbeat: 1796209200000 }),
      'dG9rLTE.1796212800000.1796209200000.54CxQq0-Ra1QW49o24vRr_X7v7bBf4S132X-uCaYWGY');
    const forged = good.replace(/\.(\d)/, '.9$1');
    assert.equal(s.gate.decode(forged), null);
    s.setCookie(`waitroom_session=${forged}`);
    assert.equal((await s.get('/checkout/')).status, 303);
  } finally { s.close(); }
});
