-- The peer's tables (scripts/peer.sh): the gateway's users, follows, posts
-- and home timelines (inbox) as a PostgreSQL user would keep them. The
-- loader (bench/peer/load) fills them with COPY; indexes.sql then adds the
-- keys, the indexes and the home_timeline() function PostGraphile serves.
create table users (
  id         bigint not null,
  username   text not null,
  created_at timestamptz not null
);

create table follows (
  follower bigint not null,
  followee bigint not null
);

create table posts (
  id         bigint not null,
  author_id  bigint not null,
  content    text not null,
  created_at timestamptz not null
);

-- One row per home-timeline entry, as the gateway's fan-out writes them:
-- the post in its author's timeline and in each fan's.
create table inbox (
  owner      bigint not null,
  created_at timestamptz not null,
  post_id    bigint not null
);
