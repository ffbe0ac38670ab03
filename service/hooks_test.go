package service

// SetRedactionHook makes svc call hook just before each call is redacted: tests of where
// redaction runs (outside every transaction) block or inspect it there.
func SetRedactionHook(svc *Services, hook func(workspaceID string)) { svc.Calls.redactHook = hook }
