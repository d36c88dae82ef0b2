package server

import (
	"reflect"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/domain"
)

// TestServicesOfWiresEveryModule checks that servicesOf fills every field
// of resolvers.Services and resolvers.Org with the domain's module of the
// same name: a field left nil would fail only when a resolver calls it.
func TestServicesOfWiresEveryModule(t *testing.T) {
	d := domain.New(testenv.Embedded(t))
	s := servicesOf(d)
	if s.UserSearch != d {
		t.Errorf("UserSearch = %v, want the domain", s.UserSearch)
	}
	same := func(prefix string, got, want reflect.Value) {
		for i := range got.NumField() {
			f := got.Type().Field(i)
			// Media is Config.Media's (an adapter over the media store and
			// its processing, by GraphQL ids), not a module of the domain.
			if f.Anonymous || f.Name == "Org" || f.Name == "Media" {
				continue
			}
			w := want.FieldByName(f.Name)
			if !w.IsValid() {
				t.Errorf("%s%s: the domain has no field %s", prefix, f.Name, f.Name)
				continue
			}
			if g := got.Field(i); g.IsNil() || g.Elem().Interface() != w.Interface() {
				t.Errorf("%s%s = %v, want the domain's %s (%v)", prefix, f.Name, g, f.Name, w)
			}
		}
	}
	same("", reflect.ValueOf(s), reflect.ValueOf(*d))
	same("Org.", reflect.ValueOf(s.Org), reflect.ValueOf(*d.Org))
}
