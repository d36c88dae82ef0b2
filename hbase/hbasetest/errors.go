package hbasetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of the errors of the Store contract: canceled contexts,
// unknown tables and unknown families.

func cContextCanceled(t *testing.T, e *cEnv) {
	for i := range 3 {
		cPut(t, e, &hbase.Put{Table: e.a, Row: []byte(fmt.Sprintf("ctx/%d", i)), Values: hbase.Values{cfF: {"a": []byte("1")}}})
	}
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if _, err := e.st.Get(ctx, &hbase.Get{Table: e.a, Row: []byte("ctx/0")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a canceled context: %v", err)
	}
	if err := e.st.Put(ctx, &hbase.Put{Table: e.a, Row: []byte("ctx/x"), Values: hbase.Values{cfF: {"a": []byte("1")}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a canceled context: %v", err)
	}
	if err := e.st.Scan(ctx, &hbase.Scan{Table: e.a, Prefix: []byte("ctx/")}, func(*hbase.Result) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Scan with a canceled context: %v", err)
	}
	// Canceled while scanning: the scan ends with the context's error.
	ctx, cancel = context.WithCancel(e.ctx)
	defer cancel()
	n := 0
	err := e.st.Scan(ctx, &hbase.Scan{Table: e.a, Prefix: []byte("ctx/")}, func(*hbase.Result) error {
		n++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("Scan canceled in its first callback: %v after %d rows, want context.Canceled after 1", err, n)
	}
}

func cUnknownTable(t *testing.T, e *cEnv) {
	for _, table := range []string{
		conformanceNamespace + ":missing_" + e.suffix,
		"missing_ns_" + e.suffix + ":t",
	} {
		row := []byte("r")
		put := &hbase.Put{Table: table, Row: row, Values: hbase.Values{cfF: {"a": []byte("1")}}}
		del := &hbase.Delete{Table: table, Row: row}
		ops := map[string]func() error{
			"Get": func() error { _, err := e.st.Get(e.ctx, &hbase.Get{Table: table, Row: row}); return err },
			"GetMany": func() error {
				_, err := e.st.GetMany(e.ctx, []*hbase.Get{{Table: e.a, Row: row}, {Table: table, Row: row}})
				return err
			},
			"Put":        func() error { return e.st.Put(e.ctx, put) },
			"PutMany":    func() error { return e.st.PutMany(e.ctx, []*hbase.Put{put}) },
			"Delete":     func() error { return e.st.Delete(e.ctx, del) },
			"DeleteMany": func() error { return e.st.DeleteMany(e.ctx, []*hbase.Delete{del}) },
			"Scan": func() error {
				return e.st.Scan(e.ctx, &hbase.Scan{Table: table}, func(*hbase.Result) error { return nil })
			},
			"CheckAndPut": func() error {
				_, err := e.st.CheckAndPut(e.ctx, put, cfF, "a", nil)
				return err
			},
			"CheckAndDelete": func() error {
				_, err := e.st.CheckAndDelete(e.ctx, del, cfF, "a", nil)
				return err
			},
			"Increment": func() error {
				_, err := e.st.Increment(e.ctx, &hbase.Increment{Table: table, Row: row, Family: cfF, Qualifier: "n", Amount: 1})
				return err
			},
		}
		for _, name := range slices.Sorted(maps.Keys(ops)) {
			if err := ops[name](); !errors.Is(err, hbase.ErrTableNotFound) {
				t.Errorf("%s on table %s: error %v, want hbase.ErrTableNotFound", name, table, err)
			}
		}
	}
}

func cUnknownFamily(t *testing.T, e *cEnv) {
	row := []byte("fam/1")
	if err := e.st.Put(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{"nope": {"a": []byte("1")}}}); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("Put to an unknown family: %v, want hbase.ErrFamilyNotFound", err)
	}
	if err := e.st.Put(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("1")}, "nope": {"a": []byte("1")}}}); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("Put to a known and an unknown family: %v, want hbase.ErrFamilyNotFound", err)
	}
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{"nope": nil}}); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("Delete of an unknown family: %v, want hbase.ErrFamilyNotFound", err)
	}
	if _, err := e.st.Increment(e.ctx, &hbase.Increment{Table: e.a, Row: row, Family: "nope", Qualifier: "n", Amount: 1}); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("Increment in an unknown family: %v, want hbase.ErrFamilyNotFound", err)
	}
	if _, err := e.st.Get(e.ctx, &hbase.Get{Table: e.a, Row: row, Families: []string{"nope"}}); err == nil {
		t.Errorf("Get of an unknown family: no error")
	}
}
