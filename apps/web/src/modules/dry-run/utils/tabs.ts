/** The report's tabs, in order; `?tab=` of the page. */
export const REPORT_TABS = ['links', 'creations', 'changes', 'conflicts', 'writes'] as const;
export type ReportTab = (typeof REPORT_TABS)[number];
