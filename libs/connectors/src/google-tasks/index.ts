export {
  createGoogleTasksConnector,
  type GoogleTasksOptions,
  googleTasksConnector,
} from './google-tasks.connector';
