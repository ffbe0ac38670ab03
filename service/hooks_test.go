package service

// SetRedactionHook makes svc call hook just before each call is redacted: tests of where
// redaction runs (outside every transaction) block or inspect it there.
func SetRedactionHook(svc *Services, hook func(workspaceID string)) { svc.Calls.redactHook = hook }

// SetJobStartHooks makes svc's job runners call beforeEndLeases as a start is about to
// end the leases of a process that died, and draining(owner) as a Stop begins waiting for
// its runs (either may be nil): tests of two runners in one process interleave there.
func SetJobStartHooks(svc *Services, beforeEndLeases func(), draining func(owner string)) {
	svc.Jobs.jobs.beforeEndLeases, svc.Jobs.jobs.draining = beforeEndLeases, draining
}

// SetPasswordCompareHook makes svc call hook with each hash a password is compared
// against (logins, a password change's current_password).
func SetPasswordCompareHook(svc *Services, hook func(hash []byte)) { svc.Auth.passwords.hook = hook }
