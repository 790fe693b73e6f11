package sqlite

// Complete is complete, for the tests.
var Complete = complete
