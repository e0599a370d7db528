//go:build race

package specs

// propertySeeds is the number of random sequences TestPropertyInvariants
// runs under -race (where it is ~10x slower); the full count runs without.
const propertySeeds = 6
