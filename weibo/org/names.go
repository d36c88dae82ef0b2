package org

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weibohbase/gateway/weibo"
)

// CleanName trims the name of a role or department and checks it is 1 to
// max characters of valid UTF-8 without control characters; the error is
// BAD_USER_INPUT on field.
func CleanName(field, name string, max int) (string, error) {
	if !utf8.ValidString(name) {
		return "", weibo.BadInput(field, "%s is not valid UTF-8", field)
	}
	name = strings.TrimSpace(name)
	n := utf8.RuneCountInString(name)
	if n == 0 {
		return "", weibo.BadInput(field, "%s must not be empty", field)
	}
	if n > max {
		return "", weibo.BadInput(field, "%s must be at most %d characters, got %d", field, max, n)
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return "", weibo.BadInput(field, "%s must not contain control characters", field)
	}
	return name, nil
}
