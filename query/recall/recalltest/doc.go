// Package recalltest is the known-answer fixture of recall, run against
// every backend's Searcher: four events of which each factor alone decides
// a different order, among fillers that give the prompt's words their rarity.
package recalltest
