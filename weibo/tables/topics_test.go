package tables_test

import (
	"bytes"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/weibo/tables"
)

// TestTopicKeys checks the topic codecs byte for byte against the example
// of docs/schema.md ("Topics"): user 5802's post at 1583037296789 ms with
// the topic 新冠肺炎.
func TestTopicKeys(t *testing.T) {
	const name = "新冠肺炎"
	post := tables.PostID{Author: 5802, Millis: 1583037296789}
	hexOf := func(s string) []byte {
		b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got := tables.TopicID(name); got != 0x37992c2e082b2866 {
		t.Errorf("TopicID = %016x", got)
	}
	entry := tables.TopicPostKey(name, post)
	if want := hexOf("0e 37992c2e082b2866 7ffffe8f6b9fcf6a 00000000000016aa"); !bytes.Equal(entry, want) {
		t.Errorf("TopicPostKey = % x, want % x", entry, want)
	}
	prefixes := tables.TopicPostPrefixes(name)
	var buckets []byte
	for _, p := range prefixes {
		buckets = append(buckets, p[0])
		if !bytes.Equal(p[1:], hexOf("37992c2e082b2866")) {
			t.Errorf("prefix % x", p)
		}
	}
	if !slices.Equal(buckets, []byte{0x02, 0x06, 0x0a, 0x0e}) {
		t.Errorf("buckets % x, want one per pre-split region: 02 06 0a 0e", buckets)
	}
	if !bytes.HasPrefix(entry, prefixes[3]) {
		t.Errorf("entry % x is under none of its prefixes", entry)
	}
	tid, got, ok := tables.DecodeTopicPostKey(entry)
	if !ok || tid != tables.TopicID(name) || got != post {
		t.Errorf("DecodeTopicPostKey = %x %v %v", tid, got, ok)
	}
	bad := slices.Clone(entry)
	bad[0] = 0x02 // another bucket of the same topic: not this post's
	if _, _, ok := tables.DecodeTopicPostKey(bad); ok {
		t.Error("DecodeTopicPostKey accepted a key in the wrong bucket")
	}
	if s, ok := tables.DecodeTopicPostSuffix(entry[tables.TopicPostPrefixLen:]); !ok || s != post {
		t.Errorf("DecodeTopicPostSuffix = %v %v", s, ok)
	}
	if k := tables.TopicKey(name); !bytes.Equal(k, hexOf("74 e696b0 e586a0 e882ba e7828e")) {
		t.Errorf("TopicKey = % x", k)
	} else if n, ok := tables.DecodeTopicKey(k); !ok || n != name {
		t.Errorf("DecodeTopicKey = %q %v", n, ok)
	}
	hour := tables.HourStart(post.Millis)
	if hour != 1583035200000 {
		t.Errorf("HourStart = %d", hour)
	}
	if k := tables.HourKey(hour); !bytes.Equal(k, hexOf("68 0000017094403200")) {
		t.Errorf("HourKey = % x", k)
	} else if h, ok := tables.DecodeHourKey(k); !ok || h != hour {
		t.Errorf("DecodeHourKey = %d %v", h, ok)
	}
	extra := tables.EncodeTopicExtra([]string{"a", name})
	if !bytes.Equal(extra, hexOf("0001 61 000c e696b0e586a0e882bae7828e")) {
		t.Errorf("EncodeTopicExtra = % x", extra)
	}
	if names, ok := tables.DecodeTopicExtra(extra); !ok || !slices.Equal(names, []string{"a", name}) {
		t.Errorf("DecodeTopicExtra = %q %v", names, ok)
	}
	if _, ok := tables.DecodeTopicExtra(extra[:5]); ok {
		t.Error("DecodeTopicExtra accepted a cut value")
	}
	pk := tables.PendingKey(tables.PendingTopic, 5802, uint64(post.Millis), 7)
	if kind, owner, other, _, ok := tables.DecodePendingKey(pk); !ok || kind != 'h' || owner != 5802 || other != uint64(post.Millis) {
		t.Errorf("DecodePendingKey of a topic marker = %c %d %d %v", kind, owner, other, ok)
	}
}
