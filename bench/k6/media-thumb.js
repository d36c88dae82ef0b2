// Thumbnails served (BENCH=media, scripts/bench-media.sh): each request
// GETs a random thumbnail of the post bench/media prepared, from
// GATEWAY_URL: the gateway's GET /media/<id>/thumb, or nginx serving the
// same bytes from files. USERS_FILE is bench/media's media.json
// ({"thumbs": [{path, bytes, etag, type}]}). No If-None-Match: every
// answer is the 200 with the whole picture, as to a browser without it
// in its cache. Bodies are discarded (the client's work is the same for
// both servers); the checks read the status and headers.
import http from 'k6/http';
import { check } from 'k6';
import { BASE, closedLoop, pick, summary, users } from './lib.js';

export const options = closedLoop({ discardResponseBodies: true });

export default function () {
  const t = pick(users.thumbs);
  const res = http.get(BASE + t.path, { tags: { name: 'thumb' } });
  check(res, {
    'status 200': (r) => r.status === 200,
    'whole picture': (r) => Number(r.headers['Content-Length']) === t.bytes,
    'same ETag': (r) => r.headers['Etag'] === t.etag,
    'same type': (r) => r.headers['Content-Type'] === t.type,
  });
}

export const handleSummary = summary;
