// The dry run of a connection, computed by the workers' `connection.dry-run` job.
export * from './dry-run.service';
export * from './dry-run-report';
