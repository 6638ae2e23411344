// The proof-of-work solver, run in a Web Worker by room.js: find s such that
// SHA-256(challenge + ":" + s) starts with `bits` zero bits (hashcash), and
// post {solution, hashes, ms}. SHA-256 is written out here (SubtleCrypto is
// asynchronous per hash, far too slow for a million small hashes).
"use strict";
var K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]);
var W = new Int32Array(64);
var H = new Int32Array(8);

// sha256First returns the first 32 bits of SHA-256(msg[0:len]); msg has
// room for the padding.
function sha256First(msg, len) {
  var total = ((len + 9 + 63) >> 6) << 6;
  msg[len] = 0x80;
  for (var i = len + 1; i < total; i++) msg[i] = 0;
  var bitsLen = len * 8;
  msg[total - 4] = bitsLen >>> 24; msg[total - 3] = bitsLen >>> 16;
  msg[total - 2] = bitsLen >>> 8; msg[total - 1] = bitsLen;
  H[0] = 0x6a09e667; H[1] = 0xbb67ae85 | 0; H[2] = 0x3c6ef372; H[3] = 0xa54ff53a | 0;
  H[4] = 0x510e527f; H[5] = 0x9b05688c | 0; H[6] = 0x1f83d9ab; H[7] = 0x5be0cd19;
  for (var off = 0; off < total; off += 64) {
    for (var t = 0; t < 16; t++) {
      var j = off + t * 4;
      W[t] = (msg[j] << 24) | (msg[j + 1] << 16) | (msg[j + 2] << 8) | msg[j + 3];
    }
    for (t = 16; t < 64; t++) {
      var w15 = W[t - 15], w2 = W[t - 2];
      var s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
      var s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
      W[t] = (W[t - 16] + s0 + W[t - 7] + s1) | 0;
    }
    var a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
    for (t = 0; t < 64; t++) {
      var S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      var ch = (e & f) ^ (~e & g);
      var t1 = (h + S1 + ch + K[t] + W[t]) | 0;
      var S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      var maj = (a & b) ^ (a & c) ^ (b & c);
      var t2 = (S0 + maj) | 0;
      h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    H[0] = (H[0] + a) | 0; H[1] = (H[1] + b) | 0; H[2] = (H[2] + c) | 0; H[3] = (H[3] + d) | 0;
    H[4] = (H[4] + e) | 0; H[5] = (H[5] + f) | 0; H[6] = (H[6] + g) | 0; H[7] = (H[7] + h) | 0;
  }
  return H;
}

// zeros counts the leading zero bits of the digest in H (up to 64).
function zeros(h) {
  if (h[0] !== 0) return Math.clz32(h[0]);
  return 32 + Math.clz32(h[1]);
}

function solve(challenge, bits) {
  var prefix = challenge + ":";
  var msg = new Uint8Array(prefix.length + 16 + 72);
  for (var i = 0; i < prefix.length; i++) msg[i] = prefix.charCodeAt(i) & 0xff;
  var start = Date.now();
  for (var n = 0; ; n++) {
    var s = n.toString(36);
    var len = prefix.length;
    for (var k = 0; k < s.length; k++) msg[len++] = s.charCodeAt(k);
    if (zeros(sha256First(msg, len)) >= bits) {
      return { solution: s, hashes: n + 1, ms: Date.now() - start };
    }
  }
}

self.onmessage = function (e) {
  self.postMessage(solve(e.data.challenge, e.data.bits));
};
