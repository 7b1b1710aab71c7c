export * from './prisma';
