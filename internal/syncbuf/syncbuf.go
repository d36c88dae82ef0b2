// Package syncbuf has the bytes.Buffer that tests hand to loggers and child
// processes writing from several goroutines at once.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is an io.Writer collecting everything written to it, safe for
// concurrent use. The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
