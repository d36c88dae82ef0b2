package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestLoad(t *testing.T) {
	ds, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Users) != 20088 || len(ds.Follows) != 50122 || len(ds.Posts) != 21673 || ds.InboxEntries() != 271307 {
		t.Errorf("users %d follows %d posts %d inbox %d; want 20088, 50122, 21673, 271307 (README.md)",
			len(ds.Users), len(ds.Follows), len(ds.Posts), ds.InboxEntries())
	}
}

func TestChecksums(t *testing.T) {
	for name, want := range map[string]string{
		EdgesFile: "c476dbf3cb127b34fd68d69613bae1ded73ad847827c9d588cb52c60fc9a49f8",
		PostsFile: "0884f9b995385ce6548aefb93c7ade5cafdbd8bb4b8fba7b7adead2d65ed349b",
	} {
		b, err := FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != want {
			t.Errorf("%s: sha256 %x, want %s (README.md)", name, h, want)
		}
	}
}
