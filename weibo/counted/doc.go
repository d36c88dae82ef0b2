// Package counted is the counted two-row write protocol the domain's
// business areas (package feed: follows, posts, likes; package org: role
// assignments, department memberships) write every counted relation with.
//
// HBase has no cross-row transactions, and a gateway may be killed between
// any two writes. A counted relation changes a two-sided pair together with
// Increment counters. Each side has one name everywhere (code, docs/schema.md,
// fsck): the AUTHORITY, the one row whose state decides the relation and
// that every read trusts, and its DEPENDENTS, the rows derived from it,
// which reads check against the authority and which are settled to agree
// with it:
//
//	relation              authority                dependents                      counters
//	follow / unfollow     attends row A→B          fans row B←A, B's posts in      A's followCount,
//	                                               A's inbox (backfill window)     B's fanCount
//	assign / revoke role  users o:<rid> of U       roles member row (rid, U)       the role's memberCount
//	publish               content row              inbox rows (fan-out)            the author's postCount
//	like / unlike post    likes row (post, user)   the post's likers row and the   the post's likeCount
//	                      holding the like's time  user's likes row at that time   (on its content row),
//	                                                                               the user's likedPostCount
//	repost                the repost's content     the root's list row of the      the root's repostCount
//	                      row (its root cell)      repost (weibo:reposts)          (on its content row)
//	add / delete comment  comments row             none                            the post's commentCount
//	publish / delete a    the post's content row   the post's entry in each        each topic's postCount and
//	post with topics      (its text's topics)      topic's list (weibo:topicposts) count in the post's hour
//	notify (one actor of  the action's authority   the actor's cell in the group   the recipient's
//	one notification)     (like, attends, comment, row, its summary, index row     unreadNotificationCount
//	                      content row)
//
// Every such write is made the same way:
//
//  1. A marker is written first: a weibo:pending row (Begin), or for a
//     publish the weibo:outbox row, holding the time the write started.
//  2. The operation sequence of every counter the write may change is
//     Incremented (tables.ColFollowsSeq and friends), before any counted
//     row changes.
//  3. The authority is changed with one conditional write (CheckAndPut or
//     CheckAndDelete), which decides whether this call changes the pair, so
//     concurrent and repeated calls count once.
//  4. The counters are Incremented (Count), only if the call changed the
//     pair and only while the write is younger than half the repair grace
//     (the budget); a write past its budget leaves the counting to the
//     repairer.
//  5. The dependents are settled (Settle): written for the authority's
//     state, then the authority is read again, and again written and read
//     until the read agrees with what was written. Whatever the
//     interleaving, the last write to a dependent row is then made for the
//     authority's final state: a writer whose writes land after the
//     authority's last change reads that change afterwards and goes round
//     again. (The fan-out reads the fans rows first and the attends rows
//     only of fans whose fans row went: a follow pair's settle writes its
//     fans row before its inbox rows; see package feed.)
//  6. The marker is deleted (End; for a publish: marked counted, and
//     deleted by the fan-out once it is done).
//
// A crash or an error anywhere leaves the marker. The repairer (Repair, run
// at start-up and with every outbox sweep) takes every marker older than
// the repair grace as the trace of a dead write: it settles the pair again
// from its authority and recounts the counters, then deletes the marker. A
// recount is exact because it is conditional: it reads the counter's
// sequence, checks that no marker younger than the grace names the counter
// (a live write between its steps 1 and 6), counts, and writes the count
// with CheckAndPut on the sequence it read. A write that starts after the
// sequence was read bumps it (step 2), so the Put fails and the counter is
// recounted at the next pass; a write that started before has its marker
// seen, or is finished, or is past its budget and will not Increment.
// Recounts never race Increments, so counters are exact once writes quiesce
// and the repairer has run.
//
// A business area adds a counted relation with one Register call (a
// Relation: its marker kind, the counters a write may change, how to
// settle its dependents) and one RegisterCounter per counter (its cell and
// how to count the rows it counts); Repair, RecountCounters and `gateway
// fsck` then handle it with no further change here. A pair that owner and
// other do not name whole (a like: author and ms of the post, and the
// liker) writes its marker with BeginWith, whose extra bytes reach the
// relation's Settle (Extend rewrites them once the write knows more); a
// counter whose row two ids name (a post's) has Counter.Sub.
//
// # Steps
//
// Tests crash a write between any two of its writes through the step hook
// (WithStepHook), which is called with the name of each step the write
// reaches. A step's name is its relation's name and a phase, joined by a
// colon (Step): the protocol's phases are the Phase constants —
// PhaseMarked and PhaseSequenced (run by Begin), PhaseDecided (run by the
// relation's code after the authority's conditional write), PhaseCounted
// (Count) and PhaseSettled (End, before the marker's delete) — and
// StepsOf(name) returns them all for one relation:
//
//	s := counted.StepsOf("like") // s.Marked == "like:marked", s.Decided == "like:decided"
//	if err := p.Step(ctx, s.Decided); err != nil { ... }
//
// A relation names the phases its own code runs in Relation.Phases
// (PhaseDecided, "dependents", "fans": Step(name, phase) each) and the
// steps of other names its writes run in Relation.MoreSteps
// ("fanout:written"); Relation.Steps, and Protocol.Steps by marker kind,
// then return every step a write of it may reach, which a conformance
// test (package countedtest) crashes the write at, one after another.
//
// This package imports neither business area; they import it.
package counted
