// Command live is the load client of `make bench`'s live-event benchmarks
// (scripts/bench.sh, BENCH=idle-subs and BENCH=push-latency): it holds
// graphql-transport-ws subscriptions on gateways and measures what they
// cost and how fast events reach them.
//
//	live idle    -url URL -ids FILE -n N -pid PID [-query events|updates|notifications] [-window 60s]
//	live latency -url URL1,URL2 -ids FANS -author ID [-per-fan 2] [-rate 2] [-duration 60s]
//
// idle opens N subscriptions as the first N users of FILE (one user id a
// line), waits for them to settle, then reads the gateway's store-call
// counters (gateway_store_calls_total, all labels, from /metrics) and the
// resident memory of process PID (VmRSS) over an idle window: store calls
// a second in all, and KiB of RSS per subscription (RSS after opening and
// settling, less RSS before, over N).
//
// latency subscribes to homeTimelineEvents as each fan of FANS, per-fan
// times, spread round-robin over the gateways of -url, then publishes
// posts as the author at -rate a second, alternately through each
// gateway, and records for each PostAdded of those posts the time from
// just before its publishPost request was sent to its arrival at the
// client (both taken in this process). Posts are matched by the sequence
// number in their content, and checked against the id publishPost
// returned.
//
// Tokens are minted (bench/internal/tokens), not obtained by logging in
// (10,000 logins would cost minutes of bcrypt): the secret is
// GATEWAY_JWT_SECRET, the gateway's. A token the gateway refuses fails the
// subscription, and the run.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/weibohbase/gateway/bench/internal/gqlpost"
	"github.com/weibohbase/gateway/bench/internal/tokens"
	"github.com/weibohbase/gateway/weibo"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: live idle|latency [flags] (see the package comment)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "idle":
		err = idle(os.Args[2:])
	case "latency":
		err = latency(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q: idle or latency", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "live:", err)
		os.Exit(1)
	}
}

// Subscription queries.
const (
	eventsQuery  = `subscription { homeTimelineEvents { __typename ... on PostAdded { post { id content } } } }`
	updatesQuery = `subscription { homeTimelineUpdates { id content } }`
	notifyQuery  = `subscription { notificationAdded { id kind actorCount } }`
)

var httpClient = &http.Client{Timeout: 60 * time.Second}

// gql posts query with variables to base's /graphql as token's user (none
// when empty) and decodes data into out.
func gql(base, token, query string, vars map[string]any, out any) error {
	return gqlpost.Do(context.Background(), base, token, query, vars, out)
}

// readIDs reads user ids, one a line.
func readIDs(path string) ([]weibo.UserID, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []weibo.UserID
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		id, err := weibo.ParseUserID(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		ids = append(ids, id)
	}
	return ids, sc.Err()
}

// mintTokens returns a token for each user of ids (tokens.Mint with the
// gateway's secret, GATEWAY_JWT_SECRET), reading their creation times
// through base.
func mintTokens(base string, ids []weibo.UserID) ([]string, error) {
	secret := os.Getenv("GATEWAY_JWT_SECRET")
	if secret == "" {
		return nil, errors.New("GATEWAY_JWT_SECRET is unset: tokens are minted with the gateway's secret")
	}
	return tokens.Mint(context.Background(), base, []byte(secret), ids)
}

// wsMsg is a graphql-transport-ws message.
type wsMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// sub is one open subscription.
type sub struct {
	conn *websocket.Conn
	wmu  sync.Mutex
	done chan struct{} // closed when the connection ends
	err  error         // why, set before done is closed
}

var dialer = websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 30 * time.Second,
	ReadBufferSize: 1024, WriteBufferSize: 1024}

// subscribe opens a connection to base as token's user and starts query as
// subscription "1"; next is called with each payload (on the connection's
// reader goroutine).
func subscribe(base, token, query string, next func(payload json.RawMessage)) (*sub, error) {
	conn, _, err := dialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", nil)
	if err != nil {
		return nil, err
	}
	s := &sub{conn: conn, done: make(chan struct{})}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}}); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		var m wsMsg
		if err := conn.ReadJSON(&m); err != nil {
			conn.Close()
			return nil, fmt.Errorf("connection_init: %w", err)
		}
		if m.Type == "connection_ack" {
			break
		}
		if m.Type != "ping" && m.Type != "pong" && m.Type != "ka" {
			conn.Close()
			return nil, fmt.Errorf("connection_init: got %s %s", m.Type, m.Payload)
		}
	}
	_ = conn.SetReadDeadline(time.Time{})
	if err := conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query}}); err != nil {
		conn.Close()
		return nil, err
	}
	go func() {
		defer close(s.done)
		for {
			var m wsMsg
			if err := conn.ReadJSON(&m); err != nil {
				s.err = err
				return
			}
			switch m.Type {
			case "ping":
				s.wmu.Lock()
				err := conn.WriteJSON(map[string]any{"type": "pong"})
				s.wmu.Unlock()
				if err != nil {
					s.err = err
					return
				}
			case "next":
				next(m.Payload)
			case "error", "complete":
				s.err = fmt.Errorf("subscription %s: %s", m.Type, m.Payload)
				return
			}
		}
	}()
	return s, nil
}

// close ends the connection.
func (s *sub) close() {
	s.wmu.Lock()
	_ = s.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	s.wmu.Unlock()
	s.conn.Close()
}

// openAll opens one subscription per token, conc at a time; urlOf says on
// which gateway each goes.
func openAll(tokens []string, urlOf func(i int) string, query string, conc int, next func(i int, payload json.RawMessage)) ([]*sub, error) {
	subs := make([]*sub, len(tokens))
	errs := make(chan error, len(tokens))
	var idx atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				i := int(idx.Add(1)) - 1
				if i >= len(tokens) {
					return
				}
				s, err := subscribe(urlOf(i), tokens[i], query, func(p json.RawMessage) { next(i, p) })
				if err != nil {
					errs <- fmt.Errorf("subscription %d: %w", i, err)
					return
				}
				subs[i] = s
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		for _, s := range subs {
			if s != nil {
				s.close()
			}
		}
		return nil, err
	}
	return subs, nil
}

// ended counts the subscriptions whose connection has ended, and returns
// the first reason.
func ended(subs []*sub) (int, error) {
	n := 0
	var first error
	for _, s := range subs {
		select {
		case <-s.done:
			n++
			if first == nil {
				first = s.err
			}
		default:
		}
	}
	return n, first
}

// metrics reads base's /metrics: the sum of every series of each name.
func metrics(base string, names ...string) (map[string]float64, error) {
	res, err := httpClient.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, n := range names {
			if !strings.HasPrefix(line, n) || (len(line) > len(n) && line[len(n)] != '{' && line[len(n)] != ' ') {
				continue
			}
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err == nil {
				out[n] += v
			}
		}
	}
	return out, sc.Err()
}

// rssKiB is process pid's VmRSS in KiB.
func rssKiB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}

// loadavg is the first field of /proc/loadavg.
func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// waitGauge waits until the sum of gateway_live_subscriptions over urls
// reaches want (at most timeout).
func waitGauge(urls []string, want float64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		sum := 0.0
		for _, u := range urls {
			m, err := metrics(u, "gateway_live_subscriptions")
			if err != nil {
				return err
			}
			sum += m["gateway_live_subscriptions"]
		}
		if sum >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gateway_live_subscriptions is %v, want %v, after %v", sum, want, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func idle(args []string) error {
	fs := flag.NewFlagSet("idle", flag.ExitOnError)
	url := fs.String("url", "http://127.0.0.1:18480", "the gateway")
	idsFile := fs.String("ids", "", "user ids, one a line (the first n are used)")
	n := fs.Int("n", 10000, "subscriptions (one per user)")
	pid := fs.Int("pid", 0, "the gateway's process id (for VmRSS)")
	query := fs.String("query", "events", "events (homeTimelineEvents), updates (homeTimelineUpdates) or notifications (notificationAdded)")
	settle := fs.Duration("settle", 10*time.Second, "wait after opening, before measuring")
	window := fs.Duration("window", 60*time.Second, "the idle window measured")
	conc := fs.Int("concurrency", 32, "connections opened at once")
	_ = fs.Parse(args)
	q := map[string]string{"events": eventsQuery, "updates": updatesQuery, "notifications": notifyQuery}[*query]
	if q == "" || *pid == 0 || *idsFile == "" {
		return errors.New("idle: -ids, -pid and -query events|updates|notifications are needed")
	}
	ids, err := readIDs(*idsFile)
	if err != nil {
		return err
	}
	if len(ids) < *n {
		return fmt.Errorf("idle: %s has %d users, want %d", *idsFile, len(ids), *n)
	}
	ids = ids[:*n]
	t := time.Now()
	tokens, err := mintTokens(*url, ids)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "live idle: %d tokens in %v\n", len(tokens), time.Since(t).Round(time.Millisecond))
	time.Sleep(2 * time.Second) // the reads of the users settle
	rss0, err := rssKiB(*pid)
	if err != nil {
		return err
	}
	t = time.Now()
	var events atomic.Int64
	subs, err := openAll(tokens, func(int) string { return *url }, q, *conc, func(int, json.RawMessage) { events.Add(1) })
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range subs {
			s.close()
		}
	}()
	opened := time.Since(t)
	if *query != "updates" { // gateway_live_subscriptions counts the pushed ones
		if err := waitGauge([]string{*url}, float64(*n), 60*time.Second); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "live idle: %d %s subscriptions open in %v; settling %v\n", *n, *query, opened.Round(time.Millisecond), *settle)
	time.Sleep(*settle)
	rss1, err := rssKiB(*pid)
	if err != nil {
		return err
	}
	const calls = "gateway_store_calls_total"
	m0, err := metrics(*url, calls)
	if err != nil {
		return err
	}
	t0, la0 := time.Now(), loadavg()
	time.Sleep(*window)
	m1, err := metrics(*url, calls)
	if err != nil {
		return err
	}
	el := time.Since(t0)
	rss2, err := rssKiB(*pid)
	if err != nil {
		return err
	}
	if k, why := ended(subs); k > 0 {
		return fmt.Errorf("idle: %d subscriptions ended during the run, the first: %v", k, why)
	}
	d := m1[calls] - m0[calls]
	fmt.Printf("idle-subs query=%s n=%d window=%.0fs store_calls=%.0f calls_per_s=%.3f rss_before_kib=%d rss_after_kib=%d rss_end_kib=%d kib_per_sub=%.1f events=%d open_s=%.1f load=%s/%s\n",
		*query, *n, el.Seconds(), d, d/el.Seconds(), rss0, rss1, rss2, float64(rss1-rss0)/float64(*n), events.Load(), opened.Seconds(), la0, loadavg())
	return nil
}

// published is what the publisher knows of one post.
type published struct {
	sent time.Time
	id   string // from publishPost's answer ("" until it comes)
	warm bool   // published during the warm-up: not measured
}

func latency(args []string) error {
	fs := flag.NewFlagSet("latency", flag.ExitOnError)
	urls := fs.String("url", "http://127.0.0.1:18480,http://127.0.0.1:18482", "the gateways, comma-separated")
	idsFile := fs.String("ids", "", "the author's fans, one user id a line")
	author := fs.String("author", "", "the author's user id")
	perFan := fs.Int("per-fan", 2, "subscriptions per fan, spread over the gateways")
	rate := fs.Float64("rate", 2, "posts a second")
	duration := fs.Duration("duration", 60*time.Second, "publishing time measured, after the warm-up")
	warmup := fs.Duration("warmup", 5*time.Second, "publishing time not measured")
	conc := fs.Int("concurrency", 32, "connections opened at once")
	_ = fs.Parse(args)
	gws := strings.Split(*urls, ",")
	if *idsFile == "" || *author == "" {
		return errors.New("latency: -ids and -author are needed")
	}
	fans, err := readIDs(*idsFile)
	if err != nil {
		return err
	}
	aid, err := weibo.ParseUserID(*author)
	if err != nil {
		return err
	}
	toks, err := mintTokens(gws[0], append([]weibo.UserID{aid}, fans...))
	if err != nil {
		return err
	}
	authorTok, fanToks := toks[0], toks[1:]
	var tokens []string
	var at []int // the gateway of each subscription
	for i, t := range fanToks {
		for k := range *perFan {
			tokens = append(tokens, t)
			at = append(at, (i+k)%len(gws))
		}
	}
	prefix := fmt.Sprintf("livebench %d ", time.Now().UnixNano())
	var mu sync.Mutex
	posts := map[int]*published{}
	lat := make([][]time.Duration, len(gws)) // per gateway of the subscriber
	var warmGot, got, wrongID, dup atomic.Int64
	seenBy := make([]map[int]bool, len(tokens))
	for i := range seenBy {
		seenBy[i] = map[int]bool{}
	}
	next := func(i int, payload json.RawMessage) {
		now := time.Now()
		var e struct {
			Data struct {
				E struct {
					Typename string `json:"__typename"`
					Post     struct {
						ID      string `json:"id"`
						Content string `json:"content"`
					} `json:"post"`
				} `json:"homeTimelineEvents"`
			} `json:"data"`
		}
		if json.Unmarshal(payload, &e) != nil || e.Data.E.Typename != "PostAdded" {
			return
		}
		rest, ok := strings.CutPrefix(e.Data.E.Post.Content, prefix)
		if !ok {
			return
		}
		seq, err := strconv.Atoi(rest)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		p := posts[seq]
		if p == nil || seenBy[i][seq] {
			dup.Add(1)
			return
		}
		seenBy[i][seq] = true
		if p.id != "" && p.id != e.Data.E.Post.ID {
			wrongID.Add(1)
		}
		if p.warm {
			warmGot.Add(1)
			return
		}
		got.Add(1)
		lat[at[i]] = append(lat[at[i]], now.Sub(p.sent))
	}
	t := time.Now()
	subs, err := openAll(tokens, func(i int) string { return gws[at[i]] }, eventsQuery, *conc, next)
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range subs {
			s.close()
		}
	}()
	if err := waitGauge(gws, float64(len(tokens)), 60*time.Second); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "live latency: %d subscriptions of %d fans over %d gateways open in %v\n",
		len(tokens), len(fans), len(gws), time.Since(t).Round(time.Millisecond))
	time.Sleep(2 * time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), *warmup+*duration)
	defer cancel()
	tick := time.NewTicker(time.Duration(float64(time.Second) / *rate))
	defer tick.Stop()
	var pubs sync.WaitGroup
	var pubErr atomic.Value
	var measured atomic.Int64
	start, la0 := time.Now(), loadavg()
	for seq := 0; ; seq++ {
		select {
		case <-ctx.Done():
		case <-tick.C:
			warm := time.Since(start) < *warmup
			if !warm {
				measured.Add(1)
			}
			pubs.Go(func() {
				mu.Lock()
				p := &published{sent: time.Now(), warm: warm}
				posts[seq] = p
				mu.Unlock()
				var r struct {
					PublishPost struct {
						ID string `json:"id"`
					} `json:"publishPost"`
				}
				err := gql(gws[seq%len(gws)], authorTok, `mutation($c: String!) { publishPost(content: $c) { id } }`,
					map[string]any{"c": prefix + strconv.Itoa(seq)}, &r)
				if err != nil {
					pubErr.Store(err)
					return
				}
				mu.Lock()
				p.id = r.PublishPost.ID
				mu.Unlock()
			})
			continue
		}
		break
	}
	pubs.Wait()
	if e, _ := pubErr.Load().(error); e != nil {
		return fmt.Errorf("publish: %w", e)
	}
	want := measured.Load() * int64(len(tokens))
	for drain := time.Now(); got.Load() < want && time.Since(drain) < 10*time.Second; {
		time.Sleep(100 * time.Millisecond)
	}
	la1 := loadavg()
	if k, why := ended(subs); k > 0 {
		return fmt.Errorf("latency: %d subscriptions ended during the run, the first: %v", k, why)
	}
	mu.Lock()
	defer mu.Unlock()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	fmt.Printf("push-latency gateways=%d fans=%d subscriptions=%d rate=%.1f/s posts=%d deliveries=%d/%d missing=%d duplicates=%d wrong_id=%d %s",
		len(gws), len(fans), len(tokens), *rate, measured.Load(), got.Load(), want, want-got.Load(), dup.Load(), wrongID.Load(), pct("all", all))
	for g, l := range lat {
		fmt.Printf(" %s", pct("gw"+strconv.Itoa(g+1), l))
	}
	fmt.Printf(" load=%s/%s\n", la0, la1)
	return nil
}

// pct formats the p50, p99 and max of d in ms.
func pct(name string, d []time.Duration) string {
	if len(d) == 0 {
		return name + "=none"
	}
	slices.Sort(d)
	at := func(q float64) float64 {
		return float64(d[min(len(d)-1, int(q*float64(len(d))))].Microseconds()) / 1000
	}
	return fmt.Sprintf("%s_p50_ms=%.1f %s_p99_ms=%.1f %s_max_ms=%.1f", name, at(0.50), name, at(0.99), name, at(1))
}
