export {
  createGoogleCalendarConnector,
  type GoogleCalendarOptions,
  googleCalendarConnector,
} from './google-calendar.connector';
