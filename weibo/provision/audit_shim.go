package provision

import "context"

// withClient marks ctx with the provisioning client's name for the audit
// log (audit.WithClient once the audit log carries clients).
func withClient(ctx context.Context, name string) context.Context { return ctx }
