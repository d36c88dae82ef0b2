// Runs graphql-http's GraphQL-over-HTTP audit (auditServer) against a
// running gateway and prints the results as JSON on stdout: one object per
// audit with its id, name (starting with MUST, SHOULD or MAY), status (ok,
// notice, warn or error) and, for a failed audit, the reason and the
// response the gateway gave (status, content type, body).
// Started by clients/audit_test.go (go test ./clients/ -run Audit), which
// serves the gateway and passes its GraphQL URL in GATEWAY_AUDIT_URL.
import { auditServer } from 'graphql-http';

const url = process.env.GATEWAY_AUDIT_URL;
if (!url) {
  throw new Error('GATEWAY_AUDIT_URL is not set: run go test ./clients/ -run Audit');
}

const results = await auditServer({ url });
const out = [];
for (const r of results) {
  const item = { id: r.id, name: r.name, status: r.status };
  if (r.status !== 'ok') {
    item.reason = r.reason;
    let body = '';
    try {
      body = await r.response.text();
    } catch (err) {
      body = `(body not readable: ${err})`;
    }
    item.response = {
      status: r.response.status,
      contentType: r.response.headers.get('content-type'),
      body: body.slice(0, 2000),
    };
  }
  out.push(item);
}
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
