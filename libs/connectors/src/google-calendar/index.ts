export {
  type CalendarPushWrite,
  createGoogleCalendarConnector,
  type GoogleCalendarOptions,
  googleCalendarConnector,
} from './google-calendar.connector';
