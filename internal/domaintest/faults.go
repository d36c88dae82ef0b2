package domaintest

import (
	"context"
	"errors"
	"sync"
)

// ErrInjected is the error a Faults hook fails an armed step with.
var ErrInjected = errors.New("injected failure between the two writes")

// Faults is a step hook (domain.WithStepHook: pass its Hook) that fails
// the steps armed in it, each once, with ErrInjected. It is safe for
// concurrent use.
type Faults struct {
	mu    sync.Mutex
	armed map[string]bool
}

// NewFaults returns a Faults with no step armed.
func NewFaults() *Faults { return &Faults{armed: map[string]bool{}} }

// Hook is the step hook: ErrInjected for an armed step (disarming it), nil
// for any other.
func (f *Faults) Hook(_ context.Context, step string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed[step] {
		delete(f.armed, step)
		return ErrInjected
	}
	return nil
}

// Arm makes the next call of step fail.
func (f *Faults) Arm(step string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed[step] = true
}
