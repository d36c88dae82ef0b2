// Package audit is the storage of the admin audit log: one event per admin
// change (who did what to which object, its state before and after, the
// request that made it), written by the org's mutations and listed newest
// first, by actor, by target, by action and by time (table weibo:audit,
// docs/schema.md "The audit log").
//
// An event is four rows or fewer. Its event row (rowkey 't' | rev | nonce)
// is the AUTHORITY: the event exists exactly when that row does. Its index
// rows by actor, target and action are DEPENDENTS, each holding a copy of
// the event (the words of package weibo/counted). Record writes the index
// rows first and the event row last, Remove deletes the event row first
// and the index rows last, so a write that dies half-way leaves only index
// rows without their event: Page skips them (it verifies every index row
// against its event row, one batched read per chunk) and `gateway fsck
// --repair` deletes them.
//
// The event of a change is written PENDING before the change commits
// (Begin: a 'p' row no listing reads, with the Proof the change's commit
// write leaves in the change's own authority row) and listed once the
// change committed (Settle, by the change itself, or Resolve, by the
// repairer and fsck, which decide from the proof): the log shows what
// happened, never a change that failed or died before its commit point
// (pending.go).
//
// The rowkeys and cells of weibo:audit are this package's own (rows.go:
// EventKey, IndexKeys, Values, DecodeRow, the EventID of an event's
// GraphQL id): no other table shares them, and the readers of the table,
// this package and `gateway fsck`, both use them from here. Package
// weibo/tables keeps the table's name and family (tables.Audit,
// tables.FamAudit) with the specs of every table.
//
// The package imports the store, the domain's shared vocabulary and the
// byte layout only, so package org can record its changes through it
// without the audit log knowing the org.
package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Event is one admin change.
type Event struct {
	// ID is the event's id, "audit:<ms>_<nonce hex>" (EventID);
	// Record sets it.
	ID string
	// At is when the event was recorded, to the millisecond; Record sets it.
	At time.Time
	// Actor is the user who made the change; 0 when none (a command-line
	// tool, a repair).
	Actor weibo.UserID
	// Action names the change: 1 to 64 bytes of ASCII letters, digits,
	// '.' and '_', e.g. "role.assign", "department.move".
	Action string
	// Target is the object changed: a user, a role, a department or a report; Kind
	// 0 when none.
	Target weibo.NodeID
	// Before and After are the object's state before and after the
	// change, compact JSON; "" means null (created, deleted, or not kept).
	Before, After string
	// RequestID is the id of the request that made the change (the
	// X-Request-Id the server logged); "" when none.
	RequestID string
	// Client is the name of the provisioning client (a SCIM client,
	// package weibo/provision/clients) that made the change; "" when a
	// user or the command line made it. Actor is 0 then.
	Client string
}

// Log is the audit log of one store. It is safe for concurrent use.
type Log struct {
	st  hbase.Store
	now func() time.Time
}

// New returns the audit log over st (migrated: tables.Migrate creates
// weibo:audit). now is the clock events are stamped with; nil is
// time.Now.
func New(st hbase.Store, now func() time.Time) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{st: st, now: now}
}

// sourceKey is the context key of WithSource.
type sourceKey struct{}

// source is what WithSource carries.
type source struct {
	actor     weibo.UserID
	requestID string
}

// WithSource returns ctx carrying who acts and in which request, for the
// code that records the change deeper down (Source).
func WithSource(ctx context.Context, actor weibo.UserID, requestID string) context.Context {
	return context.WithValue(ctx, sourceKey{}, source{actor: actor, requestID: requestID})
}

// clientKey is the context key of WithClient.
type clientKey struct{}

// WithClient returns ctx carrying the provisioning client that acts, for
// the code that records the change deeper down (ClientOf).
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

// ClientOf returns what WithClient put into ctx: "" when nothing did.
func ClientOf(ctx context.Context) string {
	c, _ := ctx.Value(clientKey{}).(string)
	return c
}

// Source returns what WithSource put into ctx: 0 and "" when nothing did.
func Source(ctx context.Context) (actor weibo.UserID, requestID string) {
	s, _ := ctx.Value(sourceKey{}).(source)
	return s.actor, s.requestID
}

// Record writes e as a new event. It checks e, sets e.ID and e.At (now,
// to the millisecond), fills e.Actor and e.RequestID from the context's
// Source (WithSource) where they are zero, and compacts e.Before and
// e.After. Then it writes the index rows (by actor when e has one, by
// target when e has one, by action: one batched Put), and the event row
// last, the commit point: the event exists once that Put succeeds. A
// failure in between leaves index rows that reads skip and fsck removes.
// e.ID is set even when Record fails after its checks, so that a caller
// unsure whether the event row landed (a timeout) can Remove it.
//
// Errors: BAD_USER_INPUT on "action" for an invalid action, on "target"
// for a post or an id 0, on "before" or "after" for invalid JSON; the
// store's.
func (l *Log) Record(ctx context.Context, e *Event) (err error) {
	defer weibo.Wrap(&err, "record audit event")
	entry, err := l.entry(ctx, e)
	if err != nil {
		return err
	}
	return l.publish(ctx, entry)
}

// entry checks e and makes its stored form, as Record describes: e.ID,
// e.At, e.Actor, e.RequestID, e.Before and e.After are set.
func (l *Log) entry(ctx context.Context, e *Event) (*Entry, error) {
	if err := checkAction("action", e.Action); err != nil {
		return nil, err
	}
	if !TargetOK(e.Target) {
		return nil, weibo.BadInput("target", "an audit target is a user, a role, a department or a report, got %s", weibo.Excerpt(e.Target.String()))
	}
	before, err := compactJSON("before", e.Before)
	if err != nil {
		return nil, err
	}
	after, err := compactJSON("after", e.After)
	if err != nil {
		return nil, err
	}
	actor, req := Source(ctx)
	if e.Actor == 0 {
		e.Actor = actor
	}
	if e.RequestID == "" {
		e.RequestID = req
	}
	if e.Client == "" {
		e.Client = ClientOf(ctx)
	}
	now := l.now()
	ms := max(now.UnixMilli(), 0)
	entry := &Entry{ID: EventID{Millis: ms, Nonce: nonce(now)}, Actor: e.Actor, Action: e.Action,
		Target: e.Target, Before: before, After: after, RequestID: e.RequestID, Client: e.Client}
	e.ID, e.At, e.Before, e.After = entry.ID.String(), time.UnixMilli(ms), before, after
	return entry, nil
}

// publish writes entry's index rows (one batched Put), then its event
// row, the point from which every read lists it.
func (l *Log) publish(ctx context.Context, entry *Entry) error {
	vals := Values(entry)
	var puts []*hbase.Put
	for _, k := range IndexKeys(entry) {
		puts = append(puts, &hbase.Put{Table: tables.Audit, Row: k, Values: vals})
	}
	if err := l.st.PutMany(ctx, puts); err != nil {
		return err
	}
	return l.st.Put(ctx, &hbase.Put{Table: tables.Audit, Row: EventKey(entry.ID), Values: vals})
}

// Remove deletes event e (by e.ID): its event row first — from then on no
// read lists it — then its index rows, those of the stored event and
// those e's own fields name: for an event recorded with Record that
// must not stay (the changes of the org record theirs pending instead:
// Begin, Abandon). Removing an event that does not exist does nothing.
// Errors:
// BAD_USER_INPUT on "id" for a malformed id; the store's.
func (l *Log) Remove(ctx context.Context, e *Event) (err error) {
	defer weibo.Wrap(&err, "remove audit event")
	id, err := ParseEventID(e.ID)
	if err != nil {
		return weibo.BadInput("id", "malformed audit event id %s", weibo.Excerpt(e.ID))
	}
	key := EventKey(id)
	r, err := l.st.Get(ctx, &hbase.Get{Table: tables.Audit, Row: key, Families: []string{tables.FamAudit}})
	if err != nil {
		return err
	}
	var dels []*hbase.Delete
	add := func(e *Entry) {
		for _, k := range IndexKeys(e) {
			if !slices.ContainsFunc(dels, func(d *hbase.Delete) bool { return bytes.Equal(d.Row, k) }) {
				dels = append(dels, &hbase.Delete{Table: tables.Audit, Row: k})
			}
		}
	}
	if _, stored, ok := DecodeRow(r); ok {
		add(stored)
	}
	if ValidAction(e.Action) {
		add(&Entry{ID: id, Actor: e.Actor, Action: e.Action, Target: e.Target})
	}
	if err := l.st.Delete(ctx, &hbase.Delete{Table: tables.Audit, Row: key}); err != nil {
		return err
	}
	return l.st.DeleteMany(ctx, dels)
}

// Get reads events by id with one batched read: one entry per id, nil
// where the event does not exist. Errors: BAD_USER_INPUT on "ids" for a
// malformed id; the store's.
func (l *Log) Get(ctx context.Context, ids []string) (_ []*Event, err error) {
	defer weibo.Wrap(&err, "audit events")
	gets := make([]*hbase.Get, len(ids))
	for i, s := range ids {
		id, err := ParseEventID(s)
		if err != nil {
			return nil, weibo.BadInput("ids", "malformed audit event id %s", weibo.Excerpt(s))
		}
		gets[i] = &hbase.Get{Table: tables.Audit, Row: EventKey(id), Families: []string{tables.FamAudit}}
	}
	if len(gets) == 0 {
		return []*Event{}, nil
	}
	rs, err := l.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Event, len(ids))
	for i, r := range rs {
		if ix, e, ok := DecodeRow(r); ok && ix == ByTime {
			out[i] = eventOf(e)
		}
	}
	return out, nil
}

// eventOf returns the Event of a stored entry.
func eventOf(e *Entry) *Event {
	return &Event{ID: e.ID.String(), At: time.UnixMilli(e.ID.Millis), Actor: e.Actor, Action: e.Action,
		Target: e.Target, Before: e.Before, After: e.After, RequestID: e.RequestID, Client: e.Client}
}

// checkAction checks an action, the argument named field.
func checkAction(field, action string) error {
	if !ValidAction(action) {
		return weibo.BadInput(field, "an action is 1 to %d bytes of ASCII letters, digits, '.' and '_', got %s",
			MaxActionLen, weibo.Excerpt(action))
	}
	return nil
}

// compactJSON returns s compacted ("" stays ""), or BAD_USER_INPUT on
// field when s is not JSON.
func compactJSON(field, s string) (string, error) {
	if s == "" {
		return "", nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return "", weibo.BadInput(field, "%s is not JSON: %v", field, err)
	}
	return b.String(), nil
}

// nonce returns an event's nonce: the nanoseconds within its millisecond,
// reversed, in the high 20 bits — so that events of one millisecond by
// one clock list newest first too — and random low bits, so that events of
// one nanosecond, or of gateways whose clocks agree, keep their own rows.
func nonce(t time.Time) uint64 {
	sub := uint64(t.Nanosecond() % 1_000_000) // < 2^20
	return (1<<20-1-sub)<<44 | rand.Uint64()>>20
}
