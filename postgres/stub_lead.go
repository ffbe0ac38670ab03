package postgres

import "github.com/voiceapi/voiceapi/data"

// PutAPIKey implements service.AccountTx; written once the accounts tables are.
func (t *tx) PutAPIKey(k *data.APIKeyRecord) error { panic("postgres: not written yet") }
