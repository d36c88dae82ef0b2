package tables

import "crypto/sha256"

// --- Trusted documents -------------------------------------------------------
//
// The GraphQL documents clients may run by id (package weibo/documents):
// what `gateway documents add` registers from an Apollo persisted query
// manifest or a Relay persistConfig output, and what a request's
// documentId ("sha256:<hex>") or Apollo persistedQuery.sha256Hash names.

// Documents holds one row per registered document. Not salted and not
// pre-split: the documents are few (an app's operations), read by rowkey
// and cached by every instance.
const Documents = Namespace + ":documents"

// Family and qualifiers of weibo:documents.
const (
	// FamDocument is family d of weibo:documents.
	FamDocument = "d"
	// ColDocText (documents, d) is the document's text as registered,
	// UTF-8: the bytes whose SHA-256 is the rowkey.
	ColDocText = "t"
	// ColDocNames (documents, d) is the names of the document's
	// operations, UTF-8, joined by ',' in document order; empty for a
	// document of one anonymous operation.
	ColDocNames = "n"
	// ColDocAdded (documents, d) is when the document was first added, ms
	// since the epoch, 8 bytes BE.
	ColDocAdded = "a"
	// ColDocSource (documents, d) is the base name of the manifest file
	// the document was first added from, UTF-8.
	ColDocSource = "s"
)

// DocumentKeyLen is the length of a DocumentKey: a SHA-256.
const DocumentKeyLen = sha256.Size

// DocumentKey is the rowkey of document text in weibo:documents: its
// SHA-256 (32 bytes).
func DocumentKey(text string) []byte {
	sum := sha256.Sum256([]byte(text))
	return sum[:]
}

// DecodeDocumentKey returns the SHA-256 a rowkey of weibo:documents
// holds; ok is false for a key that is not 32 bytes.
func DecodeDocumentKey(key []byte) (sum [sha256.Size]byte, ok bool) {
	if len(key) != sha256.Size {
		return sum, false
	}
	return [sha256.Size]byte(key), true
}
