// Runs the operations of src/Sample.js, as relay-compiler compiled them
// (.build/__generated__), with relay-runtime against a running gateway.
// Started by clients/relay_test.go (go test ./clients/...), which serves the
// gateway and passes, in GATEWAY_RELAY_TEST, its URL, tokens, and the ids
// and names of user 1, role 1, department 1 and one post.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const {
  Environment,
  Network,
  RecordSource,
  Store,
  createOperationDescriptor,
  fetchQuery,
  getRequest,
  getSelector,
} = require('relay-runtime');

const cfg = JSON.parse(process.env.GATEWAY_RELAY_TEST || 'null');
if (!cfg) {
  throw new Error('GATEWAY_RELAY_TEST is not set: run go test ./clients/...');
}

function artifact(name) {
  return require(`./.build/__generated__/${name}.graphql.js`);
}

// post sends one GraphQL request with a bearer token and returns its JSON.
async function post(token, query, variables, operationName) {
  const res = await fetch(`${cfg.url}/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables, operationName }),
  });
  return res.json();
}

// environment is a Relay environment whose network layer posts to the
// gateway with token; responses with errors fail the request.
function environment(token) {
  return new Environment({
    network: Network.create(async (params, variables) => {
      const json = await post(token, params.text, variables, params.name);
      if (json.errors) {
        throw new Error(`${params.name}: ${JSON.stringify(json.errors)}`);
      }
      return json;
    }),
    store: new Store(new RecordSource()),
  });
}

// query fetches a compiled query into env's store and reads its data back
// from the store (not from the response): what a component would render.
async function query(env, node, variables) {
  await fetchQuery(env, node, variables).toPromise();
  const op = createOperationDescriptor(getRequest(node), variables);
  const snapshot = env.lookup(op.fragment);
  assert.equal(snapshot.isMissingData, false, `${node.params.name}: data missing in the store`);
  return snapshot.data;
}

// fragment reads a fragment's data from env's store through its reference.
function fragment(env, node, ref) {
  const snapshot = env.lookup(getSelector(node, ref));
  assert.equal(snapshot.isMissingData, false, `${node.name}: data missing in the store`);
  return snapshot.data;
}

// mutate runs a mutation with the admin token, outside Relay (another
// client changing the data).
async function mutate(query, variables) {
  const json = await post(cfg.adminToken, query, variables);
  assert.equal(json.errors, undefined, JSON.stringify(json.errors));
  return json.data;
}

test('a User, a Role and a Department with the same number stay apart in one store', async () => {
  const env = environment(cfg.adminToken);
  const vars = { user: cfg.user, role: cfg.role, department: cfg.department };
  const data = await query(env, artifact('SampleSameNumberQuery'), vars);

  assert.equal(data.user.id, cfg.user);
  assert.equal(data.user.username, cfg.username);
  assert.equal(data.role.id, cfg.role);
  assert.equal(data.role.name, cfg.roleName);
  assert.equal(data.department.id, cfg.department);
  assert.equal(data.department.name, cfg.departmentName);
  assert.notEqual(data.role.name, data.department.name);

  // Three records, one per object, each of its own type.
  const source = env.getStore().getSource();
  const types = {};
  for (const id of source.getRecordIDs()) {
    const record = source.get(id);
    if (record && record.id !== undefined) {
      assert.equal(record.id, id, `record ${id} holds the id ${record.id}`);
      types[id] = record.__typename;
    }
  }
  assert.equal(types[cfg.user], 'User');
  assert.equal(types[cfg.role], 'Role');
  assert.equal(types[cfg.department], 'Department');
  assert.equal(source.get(cfg.role).name, cfg.roleName);
  assert.equal(source.get(cfg.department).name, cfg.departmentName);

  // Every role and department listed, and the viewer's own, read back as itself.
  for (const { node } of data.roles.edges) {
    assert.match(node.id, /^role:[1-9][0-9]*$/);
    assert.equal(types[node.id], 'Role');
  }
  for (const { node } of data.topDepartments.edges) {
    assert.match(node.id, /^department:[1-9][0-9]*$/);
    assert.equal(types[node.id], 'Department');
  }
  assert.ok(data.roles.edges.some(({ node }) => node.id === cfg.role && node.name === cfg.roleName));
  assert.ok(data.topDepartments.edges.some(({ node }) => node.id === cfg.department && node.name === cfg.departmentName));
  assert.ok(data.me.roles.length > 0);
  assert.equal(data.me.department.id, cfg.department);

  // The fragments read the same records.
  assert.equal(fragment(env, artifact('Sample_role'), data.role).name, cfg.roleName);
  assert.equal(fragment(env, artifact('Sample_department'), data.department).name, cfg.departmentName);
  assert.equal(fragment(env, artifact('Sample_user'), data.user).username, cfg.username);
});

test('node and nodes fetch every type by its global id', async () => {
  const env = environment(cfg.adminToken);
  const ids = [cfg.department, cfg.user, cfg.post, cfg.role, 'role:999999999'];
  const data = await query(env, artifact('SampleNodesQuery'), { ids, id: cfg.role });
  assert.deepEqual(data.node, { __typename: 'Role', id: cfg.role });
  assert.deepEqual(
    data.nodes.map((n) => n && n.__typename),
    ['Department', 'User', 'Post', 'Role', null],
  );
  assert.equal(data.nodes[0].name, cfg.departmentName);
  assert.equal(data.nodes[1].username, cfg.username);
  assert.equal(data.nodes[2].content, cfg.postContent);
  assert.equal(data.nodes[3].name, cfg.roleName);
});

test('@refetchable fragments refetch through node(id:)', async () => {
  const env = environment(cfg.adminToken);
  const data = await query(env, artifact('SampleSameNumberQuery'), {
    user: cfg.user,
    role: cfg.role,
    department: cfg.department,
  });
  for (const name of ['SampleUserRefetchQuery', 'SampleRoleRefetchQuery', 'SampleDepartmentRefetchQuery', 'SamplePostRefetchQuery']) {
    assert.match(artifact(name).params.text, /node\(id: \$id\)/, `${name} goes through node(id:)`);
  }

  // Another client renames the role and the department and user 1 posts;
  // the refetch queries bring the changes into the same records.
  const newRole = `${cfg.roleName} (renamed)`;
  const newDept = `${cfg.departmentName} (renamed)`;
  await mutate('mutation($id: ID!, $n: String!) { renameRole(id: $id, name: $n) { id } }', { id: cfg.role, n: newRole });
  await mutate('mutation($id: ID!, $n: String!) { renameDepartment(id: $id, name: $n) { id } }', { id: cfg.department, n: newDept });
  const before = fragment(env, artifact('Sample_user'), data.user);
  const published = await post(cfg.userToken, 'mutation { publishPost(content: "posted from Node") { id } }');
  assert.equal(published.errors, undefined, JSON.stringify(published.errors));

  const role = await query(env, artifact('SampleRoleRefetchQuery'), { id: cfg.role });
  assert.equal(fragment(env, artifact('Sample_role'), role.node).name, newRole);
  assert.equal(fragment(env, artifact('Sample_role'), data.role).name, newRole);
  const roleData = fragment(env, artifact('Sample_role'), data.role);
  assert.equal(roleData.members.totalCount, roleData.memberCount);
  assert.ok(roleData.memberCount > 0);

  const dept = await query(env, artifact('SampleDepartmentRefetchQuery'), { id: cfg.department });
  assert.equal(fragment(env, artifact('Sample_department'), dept.node).name, newDept);
  assert.equal(fragment(env, artifact('Sample_department'), data.department).name, newDept);
  // The role was not touched by the department's refetch, nor the other way round.
  assert.equal(env.getStore().getSource().get(cfg.role).name, newRole);

  const user = await query(env, artifact('SampleUserRefetchQuery'), { id: cfg.user });
  const after = fragment(env, artifact('Sample_user'), user.node);
  assert.equal(after.postCount, before.postCount + 1);
  assert.equal(after.posts.totalCount, after.postCount);
  assert.equal(fragment(env, artifact('Sample_user'), data.user).postCount, before.postCount + 1);

  const p = await query(env, artifact('SamplePostRefetchQuery'), { id: cfg.post });
  const postData = fragment(env, artifact('Sample_post'), p.node);
  assert.equal(postData.id, cfg.post);
  assert.equal(postData.content, cfg.postContent);
  assert.equal(postData.author.id, cfg.user);

  await mutate('mutation($id: ID!, $n: String!) { renameRole(id: $id, name: $n) { id } }', { id: cfg.role, n: cfg.roleName });
  await mutate('mutation($id: ID!, $n: String!) { renameDepartment(id: $id, name: $n) { id } }', { id: cfg.department, n: cfg.departmentName });
});

test('a home timeline connection pages backward to the posts published since', async () => {
  const env = environment(cfg.userToken);
  const root = await query(env, artifact('SampleTimelineQuery'), {});
  const Sample_timeline = artifact('Sample_timeline');
  const first = fragment(env, Sample_timeline, root).homeTimeline;
  assert.equal(first.edges.length, 2);
  assert.equal(first.pageInfo.hasPreviousPage, false);
  assert.equal(first.pageInfo.hasNextPage, true);
  const shown = first.edges.map((e) => e.node.id);

  // New posts arrive; Relay's loadPrevious asks for the last ones before
  // the connection's start cursor, and the connection handler puts them in
  // front of the edges it has.
  const fresh = [];
  for (const text of ['newer 1', 'newer 2', 'newer 3']) {
    const json = await post(cfg.userToken, 'mutation($c: String!) { publishPost(content: $c) { id } }', { c: text });
    assert.equal(json.errors, undefined, JSON.stringify(json.errors));
    fresh.unshift(json.data.publishPost.id);
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  await query(env, artifact('SampleTimelinePaginationQuery'), {
    first: null,
    after: null,
    last: 2,
    before: first.pageInfo.startCursor,
  });
  let conn = fragment(env, Sample_timeline, root).homeTimeline;
  assert.deepEqual(conn.edges.map((e) => e.node.id), [...fresh.slice(1), ...shown]);
  assert.equal(conn.pageInfo.hasPreviousPage, true);

  await query(env, artifact('SampleTimelinePaginationQuery'), {
    first: null,
    after: null,
    last: 2,
    before: conn.pageInfo.startCursor,
  });
  conn = fragment(env, Sample_timeline, root).homeTimeline;
  assert.deepEqual(conn.edges.map((e) => e.node.id), [...fresh, ...shown]);
  assert.equal(conn.pageInfo.hasPreviousPage, false);

  // And forward from the end, as loadNext does: no repeat.
  await query(env, artifact('SampleTimelinePaginationQuery'), {
    first: 10,
    after: conn.pageInfo.endCursor,
    last: null,
    before: null,
  });
  conn = fragment(env, Sample_timeline, root).homeTimeline;
  const ids = conn.edges.map((e) => e.node.id);
  assert.equal(new Set(ids).size, ids.length, `repeated edges: ${ids}`);
  assert.deepEqual(ids.slice(0, fresh.length + shown.length), [...fresh, ...shown]);
  assert.equal(conn.pageInfo.hasNextPage, false);
});
