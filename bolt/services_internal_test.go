package bolt

import (
	"sync"

	"github.com/voiceapi/voiceapi/service"
)

// testServices holds one service layer per database, so that the ids a test's calls get
// come from one generator and sort in creation order.
var testServices sync.Map // *DB → *service.Services

// svcOf returns the service layer on db, built once with db's clock, sealer and catalog:
// the tests here drive storage through the services, as the server does.
func svcOf(db *DB) *service.Services {
	if s, ok := testServices.Load(db); ok {
		return s.(*service.Services)
	}
	s, err := service.New(db, service.Options{Now: db.now, Sealer: db.sealer, Catalog: db.opts.Catalog, PasswordCost: db.opts.PasswordCost, IDs: db.ids})
	if err != nil {
		panic(err) // every DB has a sealer
	}
	actual, _ := testServices.LoadOrStore(db, s)
	return actual.(*service.Services)
}
