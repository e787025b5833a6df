import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { PublicRoute } from '../../common/auth/access';
import { loadPortalAssets, PortalAsset } from './portal-assets';

/**
 * The web portal (README.md "Portal"): a static page and its scripts and styles. The files are
 * public; every piece of data the page shows comes from the API with the signed-in user's key,
 * sent by the browser as a Bearer header, so this controller knows nothing about organizations.
 * Fixed routes, not a directory: nothing outside this list can be asked for.
 */
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
