package hbase

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestWithNamespace(t *testing.T) {
	for _, b := range []struct {
		name string
		open func(t *testing.T) Store
	}{{BackendEmbedded, newTestEmbedded}, {BackendHBase, newTestHBase}} {
		t.Run(b.name, func(t *testing.T) {
			raw := b.open(t)
			ctx := t.Context()
			spec := []TableSpec{{Name: "nst", Families: []FamilySpec{{Name: "f"}}}}
			to := fmt.Sprintf("nsmap_%d_%x", time.Now().UnixNano(), rand.Uint32())
			st := WithNamespace(raw, "app", to)
			if err := st.EnsureTables(ctx, "app", spec); err != nil {
				t.Fatal(err)
			}
			row := []byte("r1")
			if err := st.Put(ctx, &Put{Table: "app:nst", Row: row, Values: Values{"f": {"q": []byte("v")}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Increment(ctx, &Increment{Table: "app:nst", Row: row, Family: "f", Qualifier: "n", Amount: 2}); err != nil {
				t.Fatal(err)
			}
			got, err := raw.Get(ctx, &Get{Table: to + ":nst", Row: row})
			if err != nil || !bytes.Equal(got.Value("f", "q"), []byte("v")) || len(got.Value("f", "n")) != 8 {
				t.Fatalf("raw read of %s:nst = %+v, %v", to, got, err)
			}
			rows, err := ScanAll(ctx, st, &Scan{Table: "app:nst"})
			if err != nil || len(rows) != 1 {
				t.Fatalf("scan through the mapping = %d rows, %v", len(rows), err)
			}
			rs, err := st.GetMany(ctx, []*Get{{Table: "app:nst", Row: row}, {Table: "app:nst", Row: []byte("none")}})
			if err != nil || !rs[0].Exists() || rs[1].Exists() {
				t.Fatalf("GetMany = %+v, %v", rs, err)
			}
			ok, err := st.CheckAndDelete(ctx, &Delete{Table: "app:nst", Row: row}, "f", "q", []byte("v"))
			if err != nil || !ok {
				t.Fatalf("CheckAndDelete = %v, %v", ok, err)
			}
			if got, _ := raw.Get(ctx, &Get{Table: to + ":nst", Row: row}); got.Exists() {
				t.Fatal("row survived the delete")
			}
		})
	}
}
