// Package weibo is the vocabulary the gateway's domain shares: the id types
// (aliases of the byte layout's, package weibo/tables), the errors every
// business area returns to API callers (*Error with a Code and a Reason),
// users as every area sees them (User, UserConnection) and the paging
// arguments and page info of every connection (Page, PageInfo).
//
// The domain itself is two business areas, each its own package, which do
// not import each other:
//
//   - package feed, the social feed of seeds 000 and 004: accounts,
//     follows and fans, posts, the durable inbox fan-out with hybrid
//     fan-out and leases, home timelines and live updates;
//   - package org, the administration of seed 001: roles with priorities,
//     the department tree, and authorization from the role table.
//
// Both stand on package counted (the counted two-row write protocol:
// markers, operation sequences, budgets, settles, recounts and the
// repairer, with each counted relation one registered kind), on package
// paging (cursors and the verified scan every connection uses) and on
// package weibo/tables (rowkeys and cell values). Package domain wires them
// together over one store. docs/schema.md documents every table.
//
// Choices made here:
//   - The domain takes a connection's `first` and `after` as the GraphQL
//     arguments arrive and returns the connection types the schema names
//     (UserConnection, feed.PostConnection, ...), which gqlgen binds
//     directly. A cursor is a rowkey suffix that only the domain can
//     interpret, and validating both arguments in one place (package
//     paging) gives every connection the same BAD_USER_INPUT errors; the
//     resolvers pass them through untouched.
//   - The id types are defined with the byte layout in weibo/tables and
//     aliased here (UserID = tables.UserID), so callers keep weibo.UserID;
//     table creation (tables.Migrate) lives there too, being a property of
//     the layout.
//   - The offline tools (package fsck, package seed) use the business
//     areas' exported reads and the store directly; nothing in the domain
//     exists only for them, and it does not import the data-set reader.
package weibo
