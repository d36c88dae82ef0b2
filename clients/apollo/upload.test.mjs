// Runs apollo-upload-client (createUploadLink, the GraphQL multipart
// request spec) with Apollo Client 3 against a running gateway: a file
// uploaded with uploadMedia, then published with publishPost(mediaIds),
// its thumbnail fetched from the URL the gateway gives; and the same
// upload without the header that forces a CORS preflight, refused.
// Started by clients/upload_test.go (go test ./clients/ -run ApolloUpload),
// which passes, in GATEWAY_APOLLO_UPLOAD_TEST, the gateway's URL and a user's token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApolloClient, InMemoryCache, gql } from '@apollo/client/core/index.js';
import createUploadLink from 'apollo-upload-client/createUploadLink.mjs';

const cfg = JSON.parse(process.env.GATEWAY_APOLLO_UPLOAD_TEST || 'null');
if (!cfg) {
  throw new Error('GATEWAY_APOLLO_UPLOAD_TEST is not set: run go test ./clients/ -run ApolloUpload');
}
const uri = `${cfg.url}/graphql`;

// client returns an Apollo client whose link is apollo-upload-client's,
// with headers.
function client(headers) {
  return new ApolloClient({ link: createUploadLink({ uri, headers }), cache: new InMemoryCache() });
}

const UPLOAD = gql`
  mutation Upload($file: Upload!, $alt: String) {
    uploadMedia(file: $file, alt: $alt) { id alt width height blurhash mimeType bytes thumb: url(variant: THUMB) }
  }
`;
const PUBLISH = gql`
  mutation Publish($content: String!, $mediaIds: [ID!]) {
    publishPost(content: $content, mediaIds: $mediaIds) { id media { id alt url(variant: THUMB) } }
  }
`;

// The picture: the bytes the Go test passes (base64), as a browser's File.
const picture = new File([Buffer.from(cfg.file, 'base64')], 'cat.jpg', { type: 'image/jpeg' });

test('upload a picture and publish it', async () => {
  const c = client({ Authorization: `Bearer ${cfg.token}`, 'Apollo-Require-Preflight': 'true' });
  const up = await c.mutate({ mutation: UPLOAD, variables: { file: picture, alt: 'a cat' } });
  const media = up.data.uploadMedia;
  assert.match(media.id, /^media:\d+$/);
  assert.equal(media.alt, 'a cat');
  assert.ok(media.width > 0 && media.height > 0 && media.blurhash.length > 0, JSON.stringify(media));
  assert.equal(media.thumb, `/media/${media.id}/thumb`);

  const pub = await c.mutate({ mutation: PUBLISH, variables: { content: 'a post with a picture', mediaIds: [media.id] } });
  assert.deepEqual(pub.data.publishPost.media.map((m) => m.id), [media.id]);

  const res = await fetch(cfg.url + media.thumb);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^image\//);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  assert.ok((await res.arrayBuffer()).byteLength > 0);
});

test('an upload without the preflight header is refused', async () => {
  const c = client({ Authorization: `Bearer ${cfg.token}` });
  await assert.rejects(c.mutate({ mutation: UPLOAD, variables: { file: picture } }), (err) => {
    assert.equal(err.networkError?.statusCode, 400, String(err));
    assert.equal(err.networkError.result?.errors?.[0]?.extensions?.code, 'BAD_REQUEST', JSON.stringify(err.networkError.result));
    return true;
  });
});
