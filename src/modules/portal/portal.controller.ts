import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { PublicRoute } from '../../common/auth/access';
import { loadPortalAssets, PortalAsset } from './portal-assets';

/**
 * The web portal (docs/PORTAL.md "Portal"): a static page and its scripts and styles. The files are
 * public; every piece of data the page shows comes from the API with the signed-in user's key,
 * sent by the browser as a Bearer header, so this controller knows nothing about organizations.
 * Fixed routes, not a directory: nothing outside this list can be asked for. Static files are no
 * API operations: they stay out of the API document (and the typed client), public all the same.
 */
@ApiExcludeController()
@ApiTags('Portal')
@PublicRoute()
@Controller('portal')
export class PortalController {
  private readonly assets = loadPortalAssets();

  @Get()
  @ApiOperation({
    operationId: 'getPortalPage',
    summary: 'The portal page: sign in with an admin or auditor API key (kept in sessionStorage only)',
  })
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'A static file.' })
  page(@Res() res: Response): void {
    this.send(res, 'index.html');
  }

  @Get('portal.js')
  @ApiOperation({ operationId: 'getPortalScript', summary: 'The script of the portal page' })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'A static file.' })
  script(@Res() res: Response): void {
    this.send(res, 'portal.js');
  }

  @Get('portal.css')
  @ApiOperation({ operationId: 'getPortalStyles', summary: 'The styles of the portal page' })
  @ApiProduces('text/css')
  @ApiOkResponse({ description: 'A static file.' })
  styles(@Res() res: Response): void {
    this.send(res, 'portal.css');
  }

  @Get('uplot.js')
  @ApiOperation({
    operationId: 'getPortalChartScript',
    summary: 'The chart library (uPlot), served by the service so the page needs no CDN',
  })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'A static file.' })
  chartScript(@Res() res: Response): void {
    this.send(res, 'uplot.js');
  }

  @Get('uplot.css')
  @ApiOperation({ operationId: 'getPortalChartStyles', summary: 'The styles of the chart library' })
  @ApiProduces('text/css')
  @ApiOkResponse({ description: 'A static file.' })
  chartStyles(@Res() res: Response): void {
    this.send(res, 'uplot.css');
  }

  @Get('core.js')
  @ApiOperation({ operationId: 'getPortalCoreScript', summary: 'The script module every view of the portal page shares (a script module)' })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'A static file.' })
  coreScript(@Res() res: Response): void {
    this.send(res, 'core.js');
  }

  @Get('endpoints.js')
  @ApiOperation({ operationId: 'getPortalEndpointsScript', summary: "The portal page's Endpoints view (a script module)" })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'A static file.' })
  endpointsScript(@Res() res: Response): void {
    this.send(res, 'endpoints.js');
  }

  @Get('endpoint-form.js')
  @ApiOperation({
    operationId: 'getPortalEndpointFormScript',
    summary: "The portal page's endpoint form and filter test (a script module)",
  })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'A static file.' })
  endpointFormScript(@Res() res: Response): void {
    this.send(res, 'endpoint-form.js');
  }

  @Get('endpoint-form-view.js')
  @ApiOperation({
    operationId: 'getPortalEndpointFormViewScript',
    summary: "The markup of the portal page's endpoint form (a script module)",
  })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'A static file.' })
  endpointFormViewScript(@Res() res: Response): void {
    this.send(res, 'endpoint-form-view.js');
  }

  @Get('deliveries.js')
  @ApiOperation({ operationId: 'getPortalDeliveriesScript', summary: "The portal page's Delivery log view (a script module)" })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'A static file.' })
  deliveriesScript(@Res() res: Response): void {
    this.send(res, 'deliveries.js');
  }

  @Get('stats.js')
  @ApiOperation({ operationId: 'getPortalStatsScript', summary: "The portal page's Statistics view (a script module)" })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'A static file.' })
  statsScript(@Res() res: Response): void {
    this.send(res, 'stats.js');
  }

  @Get('wallets.js')
  @ApiOperation({ operationId: 'getPortalWalletsScript', summary: "The portal page's Wallets view (a script module)" })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'A static file.' })
  walletsScript(@Res() res: Response): void {
    this.send(res, 'wallets.js');
  }

  private send(res: Response, name: string): void {
    const asset = this.assets.get(name) as PortalAsset;
    res
      .status(200)
      .type(asset.contentType)
      // Revalidated on every load (Express adds an ETag), so a deployment is picked up at once.
      .set('cache-control', 'no-cache')
      .send(asset.body);
  }
}
