/**
 * What a contract suite needs from an adapter under test: a store and a way to release it.
 * Factories may hand out a fresh store per test (SQLite temp dirs) or share one server
 * (containers); the suites isolate themselves with unique stream, collection and projector names.
 */
export interface ContractSubject<T> {
  store: T;
  dispose(): Promise<void>;
}

export type OpenContractSubject<T> = () => Promise<ContractSubject<T>>;

export interface ContractOptions {
  /** True when every test gets an empty store (so "empty log" cases can be checked). */
  freshStorePerTest: boolean;
}
