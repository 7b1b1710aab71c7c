// The dry run of a connection, for the API (`@syncline/workers/dry-run`): the report runs the
// workers' own sync stage, so it lives beside it.
export * from './dry-run-report';
