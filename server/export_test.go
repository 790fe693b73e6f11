package server

// RoutesForTest lists "METHOD /pattern" of every route of s.
func RoutesForTest(s *Server) []string {
	var out []string
	for _, r := range s.routes() {
		out = append(out, r.method+" "+r.pattern)
	}
	return out
}

// OutputDelay is how long exec output may wait to be coalesced.
const OutputDelay = outputDelay

// ShedRoutesForTest lists the routes refused first under memory pressure.
func ShedRoutesForTest() []string {
	var out []string
	for r := range shedRoutes {
		out = append(out, r)
	}
	return out
}

// OpenAPIForTest is the embedded OpenAPI document.
func OpenAPIForTest() []byte { return openapiDoc }
