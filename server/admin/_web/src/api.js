// The console's only way to the gateway: GraphQL over HTTP POST to the
// gateway's public /graphql, with the token of the login mutation (kept in
// sessionStorage, so it lasts as long as the tab) as Authorization: Bearer.
//
// The page is served at <prefix>/admin/ (and <prefix>/admin, with a <base>
// of admin/), so the endpoint is ../graphql relative to the document's base:
// the console works behind a path prefix too.

const endpoint = new URL('../graphql', document.baseURI).href;
const tokenKey = 'weibo-admin-token';

export const session = {
  token: () => sessionStorage.getItem(tokenKey),
  set: token => sessionStorage.setItem(tokenKey, token),
  clear: () => sessionStorage.removeItem(tokenKey),
};

// Fired on window when the gateway no longer takes the token (expired, or
// signed with another secret): the app goes back to the login form.
export const loggedOutEvent = 'weibo-admin-logged-out';

// GraphQLError is a response's errors: message is the first one's, code and
// reason its extensions (e.g. BAD_USER_INPUT and DEPARTMENT_CYCLE).
export class GraphQLError extends Error {
  constructor(errors) {
    super(errors.map(e => e.message).join('; '));
    this.name = 'GraphQLError';
    this.errors = errors;
    this.code = errors[0]?.extensions?.code ?? '';
    this.reason = errors[0]?.extensions?.reason ?? '';
  }
}

// gql runs one operation and returns its data; any error in the response
// (even next to partial data) throws a GraphQLError.
export async function gql(query, variables = {}) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json, application/json' };
  const token = session.token();
  if (token) headers.Authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  } catch (e) {
    throw new Error(`the gateway is unreachable: ${e.message}`);
  }
  let body;
  try {
    body = await res.json();
  } catch {
    throw new Error(`the gateway answered HTTP ${res.status} without a GraphQL response`);
  }
  if (body.errors?.length) {
    const err = new GraphQLError(body.errors);
    if (err.code === 'UNAUTHENTICATED' && token) {
      session.clear();
      window.dispatchEvent(new Event(loggedOutEvent));
    }
    throw err;
  }
  return body.data;
}

// describe turns an error into the sentence the console shows, with the
// gateway's code and reason.
export function describe(err) {
  if (err instanceof GraphQLError) {
    const why = [err.code, err.reason].filter(Boolean).join(', ');
    return why ? `${err.message} (${why})` : err.message;
  }
  return err?.message ?? String(err);
}

// The actions of the audit log (AuditEvent.action).
export const auditActions = [
  'role.create',
  'role.rename',
  'role.setPermissions',
  'role.delete',
  'role.assign',
  'role.revoke',
  'department.create',
  'department.rename',
  'department.move',
  'department.delete',
  'department.setMember',
  'department.addManager',
  'department.removeManager',
  'user.suspend',
  'user.unsuspend',
  'user.provision',
  'user.update',
  'user.close',
  'report.assign',
  'report.resolve',
  'report.reopen',
];

// The permissions a role may grant (enum Permission), with what each lets
// its holders do in the console. A viewer holds a permission when one of
// their roles grants it; ADMINISTRATOR implies every other.
export const permissions = [
  { name: 'ADMINISTRATOR', about: 'everything below' },
  { name: 'MANAGE_USERS', about: 'suspend users, bulk changes' },
  { name: 'MANAGE_ROLES', about: 'create roles, set their permissions, give and take them' },
  { name: 'MANAGE_DEPARTMENTS', about: 'department managers' },
  { name: 'MANAGE_REPORTS', about: 'the reports queue' },
  { name: 'VIEW_AUDIT_LOG', about: 'the audit log' },
  { name: 'RUN_ANY_OPERATION', about: 'send any operation as text under --documents=allowlist' },
];

// The categories of a report (enum ReportCategory).
export const reportCategories = ['SPAM', 'ABUSE', 'ILLEGAL', 'OTHER'];

// The ways to resolve a report (enum ReportAction), with what each does.
export const reportActions = [
  { name: 'DISMISS', about: 'nothing to do' },
  { name: 'DELETE_CONTENT', about: 'delete the reported posts and comments' },
  { name: 'SUSPEND_USER', about: 'suspend the reported user' },
];

// untilIn returns the RFC 3339 time a number of days (a form's text, may
// be fractional) from now, or null for an empty text: a suspension's end.
// A text that is not a positive number throws.
export function untilIn(days) {
  const text = String(days).trim();
  if (!text) return null;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`“${text}” is not a positive number of days.`);
  return new Date(Date.now() + n * 86400000).toISOString();
}

// when shows an RFC 3339 time in the browser's time zone.
export const when = t => (t ? new Date(t).toLocaleString() : '');
