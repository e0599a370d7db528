//go:build !race

package specs

// propertySeeds is the number of random sequences TestPropertyInvariants
// runs (fewer under -race: property_race_test.go).
const propertySeeds = 30
