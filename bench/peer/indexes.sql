-- After the COPY (scripts/peer.sh): keys, the indexes the home page and
-- the author lookups use, and the home timeline function.
alter table users add primary key (id);
create unique index users_username on users (username);
alter table follows add primary key (follower, followee);
create index follows_followee on follows (followee);
alter table posts add primary key (id);
create index posts_author on posts (author_id, created_at desc);
-- The home page: a viewer's newest entries first, post_id in the index so
-- the scan reads no inbox heap page (the visibility map is set by the
-- vacuum below).
create unique index inbox_home on inbox (owner, created_at desc, post_id);

alter table follows add foreign key (follower) references users,
  add foreign key (followee) references users;
alter table posts add constraint posts_author_id_fkey foreign key (author_id) references users;
alter table inbox add foreign key (owner) references users,
  add foreign key (post_id) references posts;

-- GraphQL names as the gateway's schema spells them: Post.author.
comment on constraint posts_author_id_fkey on posts is E'@fieldName author\n@foreignFieldName posts';
comment on table inbox is E'@omit';
comment on table follows is E'@omit';

-- The viewer's home timeline, newest first: the viewer is the user_id
-- claim of the request's JWT (PostGraphile sets jwt.claims.*). A STABLE
-- SQL function of one query, so the planner inlines it and the page's
-- LIMIT reaches the index scan.
create function home_timeline() returns setof posts as $$
  select p.*
  from inbox i
  join posts p on p.id = i.post_id
  where i.owner = nullif(current_setting('jwt.claims.user_id', true), '')::bigint
  order by i.created_at desc, i.post_id
$$ language sql stable;

vacuum (analyze) users, follows, posts, inbox;
